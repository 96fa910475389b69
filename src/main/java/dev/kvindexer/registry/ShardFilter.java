package dev.kvindexer.registry;

import dev.kvindexer.event.PartitionKey;

/** Whether this node runs an instance's listeners and holds its blocks: all of them unless the cluster shards. */
@FunctionalInterface
public interface ShardFilter {
    ShardFilter EVERYTHING = (key, workerId, store) -> true;

    /** {@code store}: the instance is a Mooncake Store, whose blocks every rank of the partition may reach. */
    boolean holdsHere(PartitionKey key, long workerId, boolean store);
}
