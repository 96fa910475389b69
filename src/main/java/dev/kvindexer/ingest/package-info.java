/**
 * Engine connections: poller threads each driving many ZMTP subscriptions, decoding whole messages into batches
 * for the sink of each listener (a partition, or an external sink that decodes and applies its own), gap replay from engines, listener states,
 * supervision of failed threads.
 */
package dev.kvindexer.ingest;
