package dev.kvindexer.http;

import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.index.TierBreakdown;

/**
 * Renders Dynamo's ScoreResponse (docs/api/dynamo.md#scoreresponse) with the reference's member order: {@code scores},
 * {@code frequencies}, {@code instances}; inside a breakdown {@code longest_matched, gpu, dp, cpu, disk}.
 * Ids are printed unsigned, which is why this is written by hand.
 */
final class ScoreJson {
    private ScoreJson() {}

    static String render(OwnerMatches matches, int blockSize) {
        TierBreakdown breakdown = TierBreakdown.of(matches, blockSize);
        StringBuilder sb = new StringBuilder(64 + matches.size() * 96).append("{\"scores\":{");
        long worker = 0;
        boolean open = false;
        for (int j = 0; j < breakdown.ownerCount(); j++) {
            long tokens = breakdown.dpTokens(j);
            if (tokens == 0) {
                continue;
            }
            long w = breakdown.ownerWorkerId(j);
            if (open && w == worker) {
                sb.append(',');
            } else {
                sb.append(open ? "}," : "")
                        .append('"')
                        .append(Long.toUnsignedString(w))
                        .append("\":{");
                worker = w;
                open = true;
            }
            sb.append('"').append(breakdown.dpRank(j)).append("\":").append(tokens);
        }
        sb.append(open ? "}" : "").append("},\"frequencies\":[],\"instances\":{");
        for (int k = 0; k < breakdown.instanceCount(); k++) {
            sb.append(k == 0 ? "" : ",")
                    .append('"')
                    .append(Long.toUnsignedString(breakdown.workerId(k)))
                    .append("\":{\"longest_matched\":")
                    .append(breakdown.longestMatched(k))
                    .append(",\"gpu\":")
                    .append(breakdown.gpu(k))
                    .append(",\"dp\":{");
            for (int r = breakdown.dpFrom(k); r < breakdown.dpFrom(k + 1); r++) {
                sb.append(r == breakdown.dpFrom(k) ? "" : ",")
                        .append('"')
                        .append(breakdown.dpRank(r))
                        .append("\":")
                        .append(breakdown.dpTokens(r));
            }
            sb.append("},\"cpu\":")
                    .append(breakdown.cpu(k))
                    .append(",\"disk\":")
                    .append(breakdown.disk(k))
                    .append('}');
        }
        return sb.append("}}").toString();
    }
}
