package dev.kvindexer.grpc;

import io.vertx.core.Future;
import java.util.List;

/**
 * The engines kvindexer reads itself (registered over HTTP, their KV events over ZMQ), as {@code MatchExternalKvPrefix}
 * sees them: the node answers from its partition, in a cluster from every shard, the same match its {@code /query}
 * gives.
 */
public interface RegisteredEngines {
    /** No registered engines answer (a gRPC port over the bridge's reports alone). */
    RegisteredEngines NONE = hashes -> Future.succeededFuture(List.of());

    /**
     * Per registered engine with a worker address, how many leading blocks of the prompt (its engine block hashes) it
     * holds in device or host memory, when at least one.
     */
    Future<List<Holder>> prefixes(long[] engineHashes);

    /** One engine's answer: its name (the registration's instance id), its router-facing address, its blocks. */
    record Holder(String workerId, String address, int blocks) {}
}
