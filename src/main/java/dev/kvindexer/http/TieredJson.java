package dev.kvindexer.http;

import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.TieredQueryResult;

/**
 * The body of {@code /query_tiered_by_hash} (docs/api/dynamo.md#post-query_tiered_by_hash), as Dynamo's router parses it: every member present (the
 * client's types have no defaults), owners as {@code {"worker_id", "dp_rank"}} with unsigned ids, counts in blocks.
 */
final class TieredJson {
    private TieredJson() {}

    static String render(TieredQueryResult reply) {
        TieredMatch m = reply.match();
        StringBuilder sb = new StringBuilder(128)
                .append("{\"block_size\":")
                .append(reply.blockSize())
                .append(",\"tiered\":{\"device\":{\"scores\":");
        owners(sb, m.device());
        sb.append(",\"frequencies\":[]},\"lower_tier\":[");
        for (int i = 0; i < m.lowerTiers().size(); i++) {
            TieredMatch.Tier t = m.lowerTiers().get(i);
            sb.append(i == 0 ? "" : ",")
                    .append("[\"")
                    .append(t.tier().jsonName())
                    .append("\",{\"hits\":");
            owners(sb, t.hits());
            sb.append("}]");
        }
        return sb.append("]}}").toString();
    }

    private static void owners(StringBuilder sb, TieredMatch.Owners o) {
        sb.append('[');
        for (int i = 0; i < o.size(); i++) {
            sb.append(i == 0 ? "" : ",")
                    .append("[{\"worker_id\":")
                    .append(Long.toUnsignedString(o.workers()[i]))
                    .append(",\"dp_rank\":")
                    .append(o.ranks()[i])
                    .append("},")
                    .append(o.blocks()[i])
                    .append(']');
        }
        sb.append(']');
    }
}
