package dev.kvindexer.registry;

import dev.kvindexer.event.PartitionKey;

/** Whether this node runs an instance's listeners and holds its blocks: all of them unless the cluster shards. */
@FunctionalInterface
public interface ShardFilter {
    ShardFilter EVERYTHING = (key, workerId) -> true;

    boolean holdsHere(PartitionKey key, long workerId);
}
