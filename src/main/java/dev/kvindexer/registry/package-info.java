/**
 * Which partitions and listeners exist, with the reference's conflict rules; registering and unregistering
 * in an order that never lets a batch reach an index before its stream exists.
 */
package dev.kvindexer.registry;
