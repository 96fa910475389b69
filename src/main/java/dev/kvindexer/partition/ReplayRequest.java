package dev.kvindexer.partition;

/**
 * Asks the ingest side to fetch batches [start, end) of a stream from its engine's replay ROUTER and hand them, then
 * the replay's end, to {@code partition}. Replayed batches decode like live ones: the partition's block size, the
 * stream's default LoRA (null for the base model).
 */
public record ReplayRequest(
        PartitionRef partition,
        StreamId stream,
        long generation,
        long replayId,
        String replayEndpoint,
        String defaultLora,
        long start,
        long end) {
    /** The end of a replay that takes everything the engine holds from {@code start} on, up to its end marker. */
    public static final long OPEN_END = -1L;

    public boolean openEnded() {
        return end == OPEN_END;
    }

    public int blockSize() {
        return partition.blockSize();
    }
}
