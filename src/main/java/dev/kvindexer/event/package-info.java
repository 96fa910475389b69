/**
 * The vocabulary every layer shares: engine events, event batches, storage tiers, partition keys. Plain records,
 * no framework.
 */
package dev.kvindexer.event;
