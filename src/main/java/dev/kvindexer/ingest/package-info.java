/**
 * Engine connections: poller threads each driving many ZMTP subscriptions, decoding whole messages into batches
 * for their partitions, gap replay from engines, listener states, supervision of failed threads.
 */
package dev.kvindexer.ingest;
