package dev.kvindexer.partition;

/**
 * Asks for a peer's exact copy of a stream whose batches [gapStart, gapEnd) were lost for good here; the answer goes
 * back to {@code partition} ({@link PartitionRef#repair}, {@link PartitionRef#repairFailed}).
 *
 * @param engineReplayed whether the engine's replay was asked and fell short (false: the stream has no replay endpoint)
 */
public record RepairRequest(
        PartitionRef partition,
        StreamId stream,
        long generation,
        long repairId,
        long gapStart,
        long gapEnd,
        boolean engineReplayed) {
    /** The last lost seq: a copy must have applied it. */
    public long lastLost() {
        return gapEnd - 1;
    }

    /** The gap and what lost it, as the stream's last_error begins. */
    public String describe() {
        return "batches [" + Long.toUnsignedString(gapStart) + ", " + Long.toUnsignedString(gapEnd) + ") lost "
                + (engineReplayed ? "by the engine's replay" : "(no replay endpoint)");
    }
}
