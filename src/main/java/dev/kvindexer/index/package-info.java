/**
 * The index core: a prefix tree per partition keyed by block hash, holders per tier with reference counts,
 * lower tiers, eviction and the match walk. Primitive collections, no boxing on hot paths, no framework.
 */
package dev.kvindexer.index;
