package dev.kvindexer.partition;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.DumpSink;

/**
 * Renders a partition's dump value, {@code {"block_size":n,"events":[RouterEvent...]}}, in Dynamo's
 * RouterEvent JSON (SPEC §7.9): members in the reference order, every hash as an unsigned number.
 */
final class DumpWriter implements DumpSink {
    private final StringBuilder out;
    private long eventId;

    DumpWriter(int blockSize) {
        out = new StringBuilder(256).append("{\"block_size\":").append(blockSize).append(",\"events\":[");
    }

    @Override
    public void stored(long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash,
                       long blockHash, long tokensHash) {
        if (eventId > 0) {
            out.append(',');
        }
        out.append("{\"worker_id\":").append(Long.toUnsignedString(workerId))
                .append(",\"storage_tier\":\"").append(tier.jsonName())
                .append("\",\"event\":{\"event_id\":").append(eventId++)
                .append(",\"data\":{\"stored\":{\"parent_hash\":")
                .append(hasParent ? Long.toUnsignedString(parentHash) : "null")
                .append(",\"blocks\":[{\"block_hash\":").append(Long.toUnsignedString(blockHash))
                .append(",\"tokens_hash\":").append(Long.toUnsignedString(tokensHash))
                .append(",\"mm_extra_info\":null}]}},\"dp_rank\":").append(dpRank).append("}}");
    }

    String finish() {
        return out.append("]}").toString();
    }
}
