package dev.kvindexer.ingest;

/**
 * Where a listener's decoded batches go: a partition, or the C++ Conductor. Sealed, so the poller thread handles
 * each kind of stream by its type rather than by which of two handles is missing. Both kinds are declared here
 * because a sealed type's kinds must share its package; what each hands its batches to lives in its own home.
 */
public sealed interface BatchSink permits PartitionSink, CppConductorSink {}
