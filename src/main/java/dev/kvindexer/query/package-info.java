/**
 * The index as the query routes and the selection service ask it: matches with the shared stores' reach, tier by
 * tier, an engine's chain, and the routing-quality metrics of each query.
 */
package dev.kvindexer.query;
