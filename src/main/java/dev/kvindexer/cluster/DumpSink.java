package dev.kvindexer.cluster;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.partition.PartitionKey;

/** Receives a peer's /dump, partition by partition, event by event, in document order. */
public interface DumpSink {
    /** A partition begins; {@code blockSize} is 0 when the dump is of the oldest shape (a bare events array). */
    void partition(PartitionKey key, int blockSize);

    /** One RouterEvent of the current partition. */
    void event(long workerId, int dpRank, KvEvent event);

    /** The peer reported this partition as failed; nothing of it follows. */
    void partitionFailed(PartitionKey key, String error);
}
