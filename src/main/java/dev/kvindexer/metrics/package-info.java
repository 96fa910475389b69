/**
 * Counters and meter names, and the Prometheus text of the indexer's families; a leaf that the other layers
 * count into.
 */
package dev.kvindexer.metrics;
