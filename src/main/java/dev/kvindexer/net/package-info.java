/**
 * What a node holds on behalf of its peers: one byte budget that every port (ZMQ ingest, HTTP, the event bus, the
 * cluster member port, replays, replica sync) draws from for what it buffers before it is applied or answered. A
 * leaf: it imports no other package of the project.
 */
package dev.kvindexer.net;
