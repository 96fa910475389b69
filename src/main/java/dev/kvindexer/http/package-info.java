/**
 * The indexer's HTTP API: the Dynamo, Mooncake (Python-era) and C++ Conductor flavors on the same routes, the
 * /dump writer, the dashboard's routes, rendering of answers.
 */
package dev.kvindexer.http;
