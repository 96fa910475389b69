package dev.kvindexer.ingest;

import dev.kvindexer.conductor.Conductor;
import dev.kvindexer.wire.ConductorBatchDecoder;

/**
 * Where a C++ Conductor registration's stream goes instead of a partition: its batches are decoded by the
 * reference's strict rules for its type and applied to the conductor under its service key (SPEC §11.11).
 */
public record ConductorFeed(String serviceKey, ConductorBatchDecoder decoder, Conductor conductor) {
}
