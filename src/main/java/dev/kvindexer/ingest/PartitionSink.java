package dev.kvindexer.ingest;

import dev.kvindexer.partition.PartitionRef;

/**
 * A stream whose batches go to a partition: decoded by the lenient engine rules, tracked by sequence number,
 * replayed on a gap (docs/protocol/zmq.md, docs/protocol/events.md).
 */
public record PartitionSink(PartitionRef partition) implements BatchSink {}
