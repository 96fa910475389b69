/**
 * ZMTP 3 on java.nio, for every peer process we read from: the subscriber (many connections on one selector, with
 * handshake, subscription, heartbeats and reconnects) and the DEALER of a replay. What a connection holds is bounded
 * by construction and reserved from the node's network budget. Imports nothing of the project but that budget.
 */
package dev.kvindexer.zmq.zmtp;
