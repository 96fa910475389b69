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
    private final long[] missingInstances;

    /**
     * {@code merged} holds every part's events and watermarks (all parts exact, or it is not); {@code missingInstances}
     * are the instances no part could give.
     */
    public MergedPartition(PartitionKey key, int blockSize, PeerSnapshot merged, long[] missingInstances) {
        this.missingInstances = missingInstances;
        this.partition = new Partition(key, blockSize, null, new EventCounters(), new Watermarks(), replay -> {});
        partition.recover(merged);
    }

    /** The exact snapshot of what the parts held, naming the instances it lacks. */
    public PartitionSnapshot snapshot(PartitionSnapshot.Order order) {
        return new PartitionSnapshot(partition.snapshot(order), missingInstances);
    }
}
