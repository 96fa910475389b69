package dev.kvindexer.dump;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;

/** Receives a peer's /dump, partition by partition, event by event, in document order. */
public interface DumpHandler {
    /** A partition begins; {@code blockSize} is 0 when the dump is of the oldest shape (a bare events array). */
    void partition(PartitionKey key, int blockSize);

    /** One RouterEvent of the current partition. */
    void event(long workerId, int dpRank, KvEvent event);

    /** The peer reported this partition as failed; nothing of it follows. */
    void partitionFailed(PartitionKey key, String error);

    /** Event number {@code eventIndex} (0-based, in document order) of the current partition is held {@code copies} times. */
    void copies(int eventIndex, int copies) throws java.io.IOException;

    /**
     * The current partition carries stream watermarks (a kvindexer peer's exact snapshot); called once before its
     * {@link #watermark}s, also when there are none.
     */
    void exactSnapshot();

    /** The last applied seq of stream (worker, registered dp_rank) when the snapshot was taken. */
    void watermark(long workerId, int dpRank, long seq);

    /** Stream (worker, registered dp_rank) had lost {@code batches} batches for good when the snapshot was taken. */
    default void loss(long workerId, int dpRank, long batches) {}
}
