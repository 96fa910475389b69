package dev.kvindexer.registry;

import dev.kvindexer.partition.PartitionKey;

/** A validated registration of one ZMQ publisher (instance, dp_rank) into a partition. */
public record RegisterRequest(long instanceId, int dpRank, String endpoint, String replayEndpoint,
                              PartitionKey partition, int blockSize) {
}
