package dev.kvindexer.http;

import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.web.JsonBytes;
import io.vertx.core.buffer.Buffer;

/**
 * The body of {@code /query_tiered_by_hash} (docs/api/dynamo.md#post-query_tiered_by_hash), as Dynamo's router parses
 * it: every member present (the client's types have no defaults), owners as {@code {"worker_id", "dp_rank"}} with
 * unsigned ids, counts in blocks. Written as bytes ({@link JsonBytes}): the router asks this for every device-tier
 * lookup, and a fleet's answer is mostly numbers.
 */
final class TieredJson {
    /** Room for one owner's entry with a 20-digit id, so a large answer is not copied as it grows. */
    private static final int OWNER_BYTES = 56;

    private TieredJson() {}

    static Buffer bytes(TieredQueryResult reply) {
        TieredMatch m = reply.match();
        int owners = m.device().size();
        for (TieredMatch.Tier t : m.lowerTiers()) {
            owners += t.hits().size();
        }
        JsonBytes out = new JsonBytes(96 + 32 * m.lowerTiers().size() + OWNER_BYTES * owners)
                .raw("{\"block_size\":")
                .number(reply.blockSize())
                .raw(",\"tiered\":{\"device\":{\"scores\":");
        owners(out, m.device());
        out.raw(",\"frequencies\":[]},\"lower_tier\":[");
        for (int i = 0; i < m.lowerTiers().size(); i++) {
            TieredMatch.Tier t = m.lowerTiers().get(i);
            out.raw(i == 0 ? "[\"" : ",[\"").raw(t.tier().jsonName()).raw("\",{\"hits\":");
            owners(out, t.hits());
            out.raw("}]");
        }
        return out.raw("]}}").toBuffer();
    }

    private static void owners(JsonBytes out, TieredMatch.Owners o) {
        out.raw('[');
        for (int i = 0; i < o.size(); i++) {
            out.raw(i == 0 ? "[{\"worker_id\":" : ",[{\"worker_id\":")
                    .unsigned(o.workers()[i])
                    .raw(",\"dp_rank\":")
                    .number(o.ranks()[i])
                    .raw("},")
                    .number(o.blocks()[i])
                    .raw(']');
        }
        out.raw(']');
    }
}
