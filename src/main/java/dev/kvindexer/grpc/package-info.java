/**
 * SGLang's external KV indexer contract, {@code kv_indexer.v1.KVIndexer} (docs/api/sglang-grpc.md), on the gRPC port:
 * {@link dev.kvindexer.grpc.GrpcVerticle} the adapter, {@link dev.kvindexer.grpc.ExternalKvService} the operations
 * and their lock, {@code ExternalKvIndex} the placements the bridge reports, {@code PrefixScan} the prefix rules.
 * The message classes and stubs ({@code dev.kvindexer.grpc.v1}) are generated from src/main/proto at build time.
 */
package dev.kvindexer.grpc;
