/**
 * The C++ Mooncake Conductor (docs/api/mooncake-cpp.md), all in this package and its sub-packages, one per layer it spans: here its
 * core (registrations, contexts and their indexes on one event loop); {@code event} its vocabulary, {@code wire} its
 * batch decoder, {@code registry} its ZMQ subscriptions, {@code http} its msgpack routes.
 */
package dev.kvindexer.conductor;
