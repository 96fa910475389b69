/**
 * Where a node's index comes back from: a peer's dump at startup, the node's own data directory after a restart of
 * every node, and a peer's snapshot of one instance when a stream's gap cannot be replayed by its engine.
 */
package dev.kvindexer.recovery;
