/**
 * The C++ Conductor's msgpack HTTP contract: strict request checks, its error envelope, its answers' shapes.
 */
package dev.kvindexer.conductor.http;
