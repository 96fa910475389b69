package dev.kvindexer.grpc;

import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.TierType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.client.InvalidStatusException;
import io.vertx.grpc.common.GrpcStatus;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

/** A gRPC port on 127.0.0.1 over one fresh state, and the client SGLang's proto generates, for one test class. */
final class GrpcFixture implements AutoCloseable {
    final Vertx vertx = Vertx.vertx();
    final ExternalKvService service;
    final int port;
    final GrpcClient grpc;
    final KVIndexerGrpcClient client;

    GrpcFixture(int prefixMaxInflight, SecurityConfig security) throws Exception {
        service = new ExternalKvService(prefixMaxInflight);
        port = get(GrpcVerticle.deploy(
                vertx, service, new GrpcConfig("127.0.0.1", 0, prefixMaxInflight, "default", "default"), security, 2));
        grpc = GrpcClient.client(vertx);
        client = KVIndexerGrpcClient.create(grpc, SocketAddress.inetSocketAddress(port, "127.0.0.1"));
    }

    GrpcFixture() throws Exception {
        this(32, SecurityConfig.NONE);
    }

    static <T> T get(Future<T> f) throws Exception {
        try {
            return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    /** The status a call ends with; OK when it succeeds. */
    static GrpcStatus status(Future<?> call) throws Exception {
        try {
            get(call);
            return GrpcStatus.OK;
        } catch (InvalidStatusException e) {
            return e.actualStatus();
        }
    }

    static ExternalKvAction action(ExternalKvActionType type, TierType tier, long... hashes) {
        return ExternalKvAction.newBuilder()
                .setType(type)
                .setTier(tier)
                .addAllHashes(LongStream.of(hashes).boxed().toList())
                .build();
    }

    static ExternalKvAction report(TierType tier, long... hashes) {
        return action(ExternalKvActionType.ACTION_REPORT, tier, hashes);
    }

    /** As SGLang's contract tests send it: no spec, no epoch, sequence not enforced. */
    static ApplyExternalKvBatchRequest batch(String worker, String address, long seq, ExternalKvAction... actions) {
        ApplyExternalKvBatchRequest.Builder b = ApplyExternalKvBatchRequest.newBuilder()
                .setWorkerId(worker)
                .setWorkerAddress(address)
                .setSeq(seq);
        for (ExternalKvAction a : actions) {
            b.addActions(a);
        }
        return b.build();
    }

    @Override
    public void close() throws Exception {
        get(vertx.close());
    }
}
