/**
 * The indexer's HTTP API: the Dynamo and Mooncake JSON flavors on the same routes (msgpack bodies go to
 * {@code conductor.http}), the /dump writer, the dashboard's routes, rendering of answers.
 */
package dev.kvindexer.http;
