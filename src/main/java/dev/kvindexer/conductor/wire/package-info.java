/**
 * The C++ Conductor's batches to its events, by the reference's strict rules for each registration type. No framework.
 */
package dev.kvindexer.conductor.wire;
