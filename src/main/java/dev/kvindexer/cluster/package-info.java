/**
 * The cluster: Hazelcast membership, registrations shared through a signed map,
 * shard placement and scattered queries, hand-over of shards, and the guarded transport between nodes.
 */
package dev.kvindexer.cluster;
