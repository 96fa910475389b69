package dev.kvindexer.recovery;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.partition.PeerSnapshot;

/**
 * One instance's blocks and stream watermarks as this node's data directory recorded them, to be installed with a
 * replay of what its engine published since (a sharded node's cold start while other nodes are ready).
 */
public record InstanceHistory(PartitionKey key, long workerId, PeerSnapshot snapshot) {}
