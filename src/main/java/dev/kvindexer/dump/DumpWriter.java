package dev.kvindexer.dump;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.BlockVisitor;

/**
 * Renders a partition's dump value in Dynamo's shape (docs/protocol/dump.md#json-document), {@code
 * {"block_size":n,"events":[RouterEvent...]}}:
 * members in the reference order, every hash as an unsigned number. Two members that Dynamo ignores follow the
 * events and make the dump an exact snapshot (docs/protocol/recovery.md#recovery-algorithm): {@code ref_counts}, {@code [event_id, copies]}
 * for every block held more than once, and {@code watermarks}, the last applied seq of every stream. A third,
 * {@code sequence_events}, is written only when blocks were stored without tokens.
 */
public final class DumpWriter implements BlockVisitor {
    private StringBuilder out;
    private final StringBuilder sequenceEvents = new StringBuilder();
    private final StringBuilder refCounts = new StringBuilder();
    private final StringBuilder watermarks = new StringBuilder();
    private long eventId;

    public DumpWriter(int blockSize) {
        out = new StringBuilder(256).append(head(blockSize));
    }

    /** The value's opening, up to the first event. */
    static String head(int blockSize) {
        return "{\"block_size\":" + blockSize + ",\"events\":[";
    }

    @Override
    public void stored(
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean hasParent,
            long parentHash,
            long blockHash,
            long tokensHash) {
        routerEvent(
                separate(out, eventId > 0),
                eventId++,
                workerId,
                dpRank,
                tier,
                hasParent,
                parentHash,
                blockHash,
                tokensHash);
    }

    /**
     * Blocks stored without tokens go to a member of their own, {@code sequence_events}, in the same RouterEvent shape
     * with the sequence hash as both hashes: Dynamo ignores the member (this project's choice,
     * docs/protocol/events.md#standardized-events-into-index-operations: such blocks cannot be put in
     * its tree faithfully), and our recovery places them by sequence hash again.
     */
    @Override
    public void storedBySequence(
            long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash, long sequenceHash) {
        routerEvent(
                separate(sequenceEvents),
                eventId++,
                workerId,
                dpRank,
                tier,
                hasParent,
                parentHash,
                sequenceHash,
                sequenceHash);
    }

    /** One RouterEvent of a stored block, as Dynamo writes it in a dump. */
    static void routerEvent(
            StringBuilder to,
            long eventId,
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean hasParent,
            long parentHash,
            long blockHash,
            long tokensHash) {
        to.append("{\"worker_id\":")
                .append(Long.toUnsignedString(workerId))
                .append(",\"storage_tier\":\"")
                .append(tier.jsonName())
                .append("\",\"event\":{\"event_id\":")
                .append(eventId)
                .append(",\"data\":{\"stored\":{\"parent_hash\":")
                .append(hasParent ? Long.toUnsignedString(parentHash) : "null")
                .append(",\"blocks\":[{\"block_hash\":")
                .append(Long.toUnsignedString(blockHash))
                .append(",\"tokens_hash\":")
                .append(Long.toUnsignedString(tokensHash))
                .append(",\"mm_extra_info\":null}]}},\"dp_rank\":")
                .append(dpRank)
                .append("}}");
    }

    @Override
    public void copies(int copies) {
        refCount(separate(refCounts), eventId - 1, copies);
    }

    /** One {@code ref_counts} element: the event's block is held {@code copies} times. */
    static void refCount(StringBuilder to, long eventId, int copies) {
        to.append('[').append(eventId).append(',').append(copies).append(']');
    }

    /** Called after the index dump, in a stable order. */
    public void watermark(long workerId, int dpRank, long seq) {
        watermark(separate(watermarks), workerId, dpRank, seq);
    }

    /** One {@code watermarks} element. */
    static void watermark(StringBuilder to, long workerId, int dpRank, long seq) {
        to.append("{\"worker_id\":")
                .append(Long.toUnsignedString(workerId))
                .append(",\"dp_rank\":")
                .append(dpRank)
                .append(",\"seq\":")
                .append(Long.toUnsignedString(seq))
                .append('}');
    }

    private static StringBuilder separate(StringBuilder sb) {
        return separate(sb, sb.length() > 0);
    }

    static StringBuilder separate(StringBuilder sb, boolean notFirst) {
        return notFirst ? sb.append(',') : sb;
    }

    /** Characters written since the last {@link #takeEvents()}. */
    public int pendingChars() {
        return out.length();
    }

    /** The text written so far, which the document continues; what follows is written afresh. */
    public String takeEvents() {
        String piece = out.toString();
        out = new StringBuilder(Math.max(256, piece.length()));
        return piece;
    }

    /** The rest of the value after {@link #takeEvents()}: nothing is missing from it. */
    public String finish() {
        return finish(new long[0]);
    }

    /**
     * The rest of the value; {@code missingInstances}, when there are any, are named in a member of their own
     * ({@code missing_instances}, which Dynamo ignores), so the value never passes for the whole partition.
     */
    public String finish(long[] missingInstances) {
        out.append(']');
        if (sequenceEvents.length() > 0) {
            out.append(",\"sequence_events\":[").append(sequenceEvents).append(']');
        }
        out.append(",\"ref_counts\":[")
                .append(refCounts)
                .append("],\"watermarks\":[")
                .append(watermarks)
                .append(']');
        return end(out, missingInstances).toString();
    }

    /** The value's end after its last member: the instances missing from it, if any, and the closing brace. */
    static StringBuilder end(StringBuilder out, long[] missingInstances) {
        if (missingInstances.length > 0) {
            out.append(",\"missing_instances\":[");
            for (int i = 0; i < missingInstances.length; i++) {
                separate(out, i > 0).append(Long.toUnsignedString(missingInstances[i]));
            }
            out.append(']');
        }
        return out.append('}');
    }

    /** The value of a partition that could not dump: readers report it (DumpHandler#partitionFailed) and go on. */
    public static String failedPartition(String error) {
        return "{\"error\":" + quoted(String.valueOf(error)) + "}";
    }

    /** A JSON string literal. */
    public static String quoted(String s) {
        return '"' + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + '"';
    }
}
