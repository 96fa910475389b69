package dev.kvindexer.http;

import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.TierBreakdown;
import java.util.List;

/**
 * Renders Dynamo's ScoreResponse (docs/api/dynamo.md#scoreresponse) with the reference's member order: {@code scores},
 * {@code frequencies}, {@code instances}; inside a breakdown {@code longest_matched, gpu, dp, cpu, disk}.
 * Ids are printed unsigned, which is why this is written by hand.
 */
final class ScoreJson {
    private ScoreJson() {}

    static String render(List<OwnerMatch> matches, int blockSize) {
        TierBreakdown breakdown = TierBreakdown.of(matches, blockSize);
        StringBuilder sb = new StringBuilder(64 + matches.size() * 96).append("{\"scores\":{");
        long worker = 0;
        boolean open = false;
        for (TierBreakdown.Score s : breakdown.scores()) {
            if (open && s.workerId() == worker) {
                sb.append(',');
            } else {
                sb.append(open ? "}," : "")
                        .append('"')
                        .append(Long.toUnsignedString(s.workerId()))
                        .append("\":{");
                worker = s.workerId();
                open = true;
            }
            sb.append('"').append(s.dpRank()).append("\":").append(s.tokens());
        }
        sb.append(open ? "}" : "").append("},\"frequencies\":[],\"instances\":{");
        List<TierBreakdown.InstanceBreakdown> instances = breakdown.instances();
        for (int i = 0; i < instances.size(); i++) {
            TierBreakdown.InstanceBreakdown b = instances.get(i);
            sb.append(i == 0 ? "" : ",")
                    .append('"')
                    .append(Long.toUnsignedString(b.workerId()))
                    .append("\":{\"longest_matched\":")
                    .append(b.longestMatched())
                    .append(",\"gpu\":")
                    .append(b.gpu())
                    .append(",\"dp\":{");
            for (int r = 0; r < b.dpRanks().length; r++) {
                sb.append(r == 0 ? "" : ",")
                        .append('"')
                        .append(b.dpRanks()[r])
                        .append("\":")
                        .append(b.dpTokens()[r]);
            }
            sb.append("},\"cpu\":")
                    .append(b.cpu())
                    .append(",\"disk\":")
                    .append(b.disk())
                    .append('}');
        }
        return sb.append("}}").toString();
    }
}
