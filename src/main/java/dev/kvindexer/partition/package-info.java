/**
 * The partition actor: one per (model, routing group), owning its index on one event loop, reached only
 * through the typed, Future-returning {@code PartitionRef}; stream sequencing, exact snapshots, the memory budget.
 */
package dev.kvindexer.partition;
