/**
 * Counters and meter names, and the Prometheus text of the indexer's families; a leaf that the other layers
 * count into. Also the OpenTelemetry SDK Vert.x reports its spans to, when tracing is on ({@link
 * dev.kvindexer.metrics.Tracing}).
 */
package dev.kvindexer.metrics;
