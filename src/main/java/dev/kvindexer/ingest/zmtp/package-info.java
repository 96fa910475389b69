/**
 * A ZMTP 3 subscriber on java.nio: greeting, handshake, subscription, framing with sizes checked before
 * allocation, heartbeats and reconnects, many connections on one selector with no thread of their own.
 */
package dev.kvindexer.ingest.zmtp;
