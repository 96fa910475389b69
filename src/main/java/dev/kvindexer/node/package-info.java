/**
 * Assembles one node: Vert.x (clustered or not), ingest, the registry, partitions, HTTP, the cluster parts, in
 * their startup order; readiness composed from each part's own check; an orderly shutdown within its budget.
 */
package dev.kvindexer.node;
