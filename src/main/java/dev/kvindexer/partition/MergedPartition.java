package dev.kvindexer.partition;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.EventCounters;

/**
 * One partition's dump assembled from snapshots of its instances taken on several nodes (a sharded cluster's
 * {@code /dump}): the parts are installed into a partition of its own, never deployed, which then writes the dump as
 * a single node holding everything would. Blocking; for the rare whole dump, not for queries.
 */
public final class MergedPartition {
    private final Partition partition;

    /** {@code merged} holds every part's events and watermarks (all parts exact, or it is not). */
    public MergedPartition(PartitionKey key, int blockSize, PeerSnapshot merged) {
        this.partition = new Partition(key, blockSize, null, new EventCounters(), new Watermarks(), replay -> {
        });
        partition.recover(merged);
    }

    /** The partition's /dump value, as {@link Partition#dumpJson()}. */
    public String json() {
        return partition.dumpJson();
    }

    /** The binary snapshot, as {@link Partition#snapshot()}. */
    public byte[] snapshot() {
        return partition.snapshot();
    }
}
