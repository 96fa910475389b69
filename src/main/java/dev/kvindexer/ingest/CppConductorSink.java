package dev.kvindexer.ingest;

import dev.kvindexer.conductor.CppConductor;
import dev.kvindexer.conductor.wire.CppConductorBatchDecoder;

/**
 * A C++ Conductor registration's stream: its batches are decoded by the reference's strict rules for its type and
 * applied to the conductor under its service key (docs/protocol/events.md#c-conductor-events). No sequence tracking:
 * its Store publisher has no
 * replay.
 */
public record CppConductorSink(String serviceKey, CppConductorBatchDecoder decoder, CppConductor conductor)
        implements BatchSink {}
