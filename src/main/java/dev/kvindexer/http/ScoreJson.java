package dev.kvindexer.http;

import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.index.TierBreakdown;
import dev.kvindexer.web.JsonBytes;
import io.vertx.core.buffer.Buffer;

/**
 * Renders Dynamo's ScoreResponse (docs/api/dynamo.md#scoreresponse) with the reference's member order: {@code scores},
 * {@code frequencies}, {@code instances}; inside a breakdown {@code longest_matched, gpu, dp, cpu, disk}.
 * Ids are printed unsigned, which is why this is written by hand, as bytes: a fleet's answer is one instance an
 * engine.
 */
final class ScoreJson {
    private ScoreJson() {}

    static Buffer render(OwnerMatches matches, int blockSize) {
        TierBreakdown breakdown = TierBreakdown.of(matches, blockSize);
        JsonBytes out = new JsonBytes(64 + matches.size() * 160).raw("{\"scores\":{");
        long worker = 0;
        boolean open = false;
        for (int j = 0; j < breakdown.ownerCount(); j++) {
            long tokens = breakdown.dpTokens(j);
            if (tokens == 0) {
                continue;
            }
            long w = breakdown.ownerWorkerId(j);
            if (open && w == worker) {
                out.raw(',');
            } else {
                out.raw(open ? "},\"" : "\"").unsigned(w).raw("\":{");
                worker = w;
                open = true;
            }
            out.raw('"').number(breakdown.dpRank(j)).raw("\":").number(tokens);
        }
        out.raw(open ? "}" : "").raw("},\"frequencies\":[],\"instances\":{");
        for (int k = 0; k < breakdown.instanceCount(); k++) {
            out.raw(k == 0 ? "\"" : ",\"")
                    .unsigned(breakdown.workerId(k))
                    .raw("\":{\"longest_matched\":")
                    .number(breakdown.longestMatched(k))
                    .raw(",\"gpu\":")
                    .number(breakdown.gpu(k))
                    .raw(",\"dp\":{");
            for (int r = breakdown.dpFrom(k); r < breakdown.dpFrom(k + 1); r++) {
                out.raw(r == breakdown.dpFrom(k) ? "\"" : ",\"")
                        .number(breakdown.dpRank(r))
                        .raw("\":")
                        .number(breakdown.dpTokens(r));
            }
            out.raw("},\"cpu\":")
                    .number(breakdown.cpu(k))
                    .raw(",\"disk\":")
                    .number(breakdown.disk(k))
                    .raw('}');
        }
        return out.raw("}}").toBuffer();
    }
}
