/**
 * Engine connections: poller threads each driving many ZMTP subscriptions, decoding whole messages into batches
 * for the sink of each listener (a partition or the C++ Conductor), gap replay from engines, listener states,
 * supervision of failed threads.
 */
package dev.kvindexer.ingest;
