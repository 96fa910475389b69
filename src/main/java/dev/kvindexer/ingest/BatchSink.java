package dev.kvindexer.ingest;

/**
 * Where a listener's decoded batches go: a partition, or a stream that reads and applies its own batches. Sealed, so
 * the poller thread handles each kind of stream by its type; the second kind is open, so an API with its own event
 * rules plugs in without this package knowing it.
 */
public sealed interface BatchSink permits PartitionSink, ExternalSink {}
