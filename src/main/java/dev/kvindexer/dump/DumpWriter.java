package dev.kvindexer.dump;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.BlockVisitor;

/**
 * Renders a partition's dump value in Dynamo's shape (SPEC §7.9), {@code {"block_size":n,"events":[RouterEvent...]}}:
 * members in the reference order, every hash as an unsigned number. Two members that Dynamo ignores follow the
 * events and make the dump an exact snapshot (DESIGN "Exact recovery"): {@code ref_counts}, {@code [event_id, copies]}
 * for every block held more than once, and {@code watermarks}, the last applied seq of every stream. A third,
 * {@code sequence_events}, is written only when blocks were stored without tokens.
 */
public final class DumpWriter implements BlockVisitor {
    private final StringBuilder out;
    private final StringBuilder sequenceEvents = new StringBuilder();
    private final StringBuilder refCounts = new StringBuilder();
    private final StringBuilder watermarks = new StringBuilder();
    private long eventId;

    public DumpWriter(int blockSize) {
        out = new StringBuilder(256).append("{\"block_size\":").append(blockSize).append(",\"events\":[");
    }

    @Override
    public void stored(long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash,
                       long blockHash, long tokensHash) {
        routerEvent(separate(out, eventId > 0), workerId, dpRank, tier, hasParent, parentHash, blockHash, tokensHash);
    }

    /**
     * Blocks stored without tokens go to a member of their own, {@code sequence_events}, in the same RouterEvent shape
     * with the sequence hash as both hashes: Dynamo ignores the member (SPEC §5.5 [REC]: such blocks cannot be put in
     * its tree faithfully), and our recovery places them by sequence hash again.
     */
    @Override
    public void storedBySequence(long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash,
                                 long sequenceHash) {
        routerEvent(separate(sequenceEvents), workerId, dpRank, tier, hasParent, parentHash, sequenceHash, sequenceHash);
    }

    private void routerEvent(StringBuilder to, long workerId, int dpRank, StorageTier tier, boolean hasParent,
                             long parentHash, long blockHash, long tokensHash) {
        to.append("{\"worker_id\":").append(Long.toUnsignedString(workerId))
                .append(",\"storage_tier\":\"").append(tier.jsonName())
                .append("\",\"event\":{\"event_id\":").append(eventId++)
                .append(",\"data\":{\"stored\":{\"parent_hash\":")
                .append(hasParent ? Long.toUnsignedString(parentHash) : "null")
                .append(",\"blocks\":[{\"block_hash\":").append(Long.toUnsignedString(blockHash))
                .append(",\"tokens_hash\":").append(Long.toUnsignedString(tokensHash))
                .append(",\"mm_extra_info\":null}]}},\"dp_rank\":").append(dpRank).append("}}");
    }

    @Override
    public void copies(int copies) {
        separate(refCounts).append('[').append(eventId - 1).append(',').append(copies).append(']');
    }

    /** Called after the index dump, in a stable order. */
    public void watermark(long workerId, int dpRank, long seq) {
        separate(watermarks).append("{\"worker_id\":").append(Long.toUnsignedString(workerId))
                .append(",\"dp_rank\":").append(dpRank)
                .append(",\"seq\":").append(Long.toUnsignedString(seq)).append('}');
    }

    private static StringBuilder separate(StringBuilder sb) {
        return separate(sb, sb.length() > 0);
    }

    private static StringBuilder separate(StringBuilder sb, boolean notFirst) {
        return notFirst ? sb.append(',') : sb;
    }

    public String finish() {
        out.append(']');
        if (sequenceEvents.length() > 0) {
            out.append(",\"sequence_events\":[").append(sequenceEvents).append(']');
        }
        return out.append(",\"ref_counts\":[").append(refCounts)
                .append("],\"watermarks\":[").append(watermarks).append("]}").toString();
    }

    /** The value of a partition that could not dump: readers report it (DumpHandler#partitionFailed) and go on. */
    public static String failedPartition(String error) {
        return "{\"error\":" + quoted(String.valueOf(error)) + "}";
    }

    /** The /dump document: each partition's value under its dump key, in the order given. */
    public static String document(java.util.List<PartitionKey> keys, java.util.List<String> values) {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < keys.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(quoted(keys.get(i).dumpKey())).append(':').append(values.get(i));
        }
        return sb.append('}').toString();
    }

    private static String quoted(String s) {
        return '"' + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + '"';
    }
}
