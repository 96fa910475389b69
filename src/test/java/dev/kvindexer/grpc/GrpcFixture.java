package dev.kvindexer.grpc;

import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchResponse;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.ExternalKvNodeMatch;
import dev.kvindexer.grpc.v1.GetExternalKvHitCountsRequest;
import dev.kvindexer.grpc.v1.HitCountEntry;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.MatchExternalKvRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvResponse;
import dev.kvindexer.grpc.v1.TierHashes;
import dev.kvindexer.grpc.v1.TierType;
import dev.kvindexer.grpc.v1.WorkerCacheSpec;
import dev.kvindexer.metrics.GrpcMetrics;
import dev.kvindexer.net.NetworkBudget;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.client.InvalidStatusException;
import io.vertx.grpc.common.GrpcStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

/** A gRPC port on 127.0.0.1 over one fresh state, and the client SGLang's proto generates, for one test class. */
final class GrpcFixture implements AutoCloseable {
    final Vertx vertx = Vertx.vertx();
    final ExternalKvService service;
    final GrpcMetrics metrics = new GrpcMetrics();
    final int port;
    final GrpcClient grpc;
    final KVIndexerGrpcClient client;

    GrpcFixture(int prefixMaxInflight, SecurityConfig security) throws Exception {
        this(prefixMaxInflight, security, NetworkBudget.unbounded());
    }

    /** A port whose calls' bodies are held under {@code budget}. */
    GrpcFixture(int prefixMaxInflight, SecurityConfig security, NetworkBudget budget) throws Exception {
        service = new ExternalKvService(prefixMaxInflight);
        port = get(GrpcVerticle.deploy(
                vertx,
                service,
                new GrpcConfig("127.0.0.1", 0, prefixMaxInflight, "default", "default"),
                security,
                metrics,
                budget,
                2));
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

    static ExternalKvAction revoke(TierType tier, long... hashes) {
        return action(ExternalKvActionType.ACTION_REVOKE, tier, hashes);
    }

    static ExternalKvAction clear(TierType tier) {
        return action(ExternalKvActionType.ACTION_CLEAR_ALL_AT_TIER, tier);
    }

    /** A REPORT with component detail, as the bridge sends it for a worker with --enable-kv-events-component-types. */
    static ExternalKvAction report(TierType tier, long[] hashes, int[] masks, int[] sizes) {
        return report(tier, hashes).toBuilder()
                .addAllComponentMasks(IntStream.of(masks).boxed().toList())
                .addAllBlockSizes(IntStream.of(sizes).boxed().toList())
                .build();
    }

    static TierHashes tierHashes(TierType tier, long... hashes) {
        return TierHashes.newBuilder().setTier(tier).addAllHashes(longs(hashes)).build();
    }

    /** A version-1 cache spec; tier arguments are masks of (1 << TierType). */
    static WorkerCacheSpec spec(int components, int swaWindow, int fullTiers, int swaTiers, int mambaTiers) {
        return WorkerCacheSpec.newBuilder()
                .setVersion(1)
                .setComponents(components)
                .setSwaWindowTokens(swaWindow)
                .setFullTierMask(fullTiers)
                .setSwaTierMask(swaTiers)
                .setMambaTierMask(mambaTiers)
                .build();
    }

    static List<Long> longs(long... values) {
        return LongStream.of(values).boxed().toList();
    }

    ApplyExternalKvBatchResponse apply(ApplyExternalKvBatchRequest r) throws Exception {
        return get(client.applyExternalKvBatch(r));
    }

    MatchExternalKvResponse match(long... hashes) throws Exception {
        return get(client.matchExternalKv(
                MatchExternalKvRequest.newBuilder().addAllHashes(longs(hashes)).build()));
    }

    /** A MatchExternalKv that counts every hash it finds as a hit. */
    MatchExternalKvResponse countingMatch(long... hashes) throws Exception {
        return get(client.matchExternalKv(MatchExternalKvRequest.newBuilder()
                .addAllHashes(longs(hashes))
                .setCountAsHit(true)
                .build()));
    }

    /** GetExternalKvHitCounts as hash → count, in answer order. */
    Map<Long, Long> hits(long... hashes) throws Exception {
        Map<Long, Long> out = new LinkedHashMap<>();
        for (HitCountEntry e : get(client.getExternalKvHitCounts(GetExternalKvHitCountsRequest.newBuilder()
                        .addAllHashes(longs(hashes))
                        .build()))
                .getEntriesList()) {
            out.put(e.getHash(), e.getHitCountTotal());
        }
        return out;
    }

    /** A prefix query considering at most {@code maxBlocks} leading blocks (0: all). */
    MatchExternalKvPrefixResponse prefixUpTo(int maxBlocks, long... hashes) throws Exception {
        return get(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                .addAllHashes(longs(hashes))
                .setMaxBlocks(maxBlocks)
                .build()));
    }

    MatchExternalKvPrefixResponse prefix(long... hashes) throws Exception {
        return prefixUpTo(0, hashes);
    }

    /** Best prefix for one worker in a prefix answer, 0 when it is not listed. */
    static int prefixOf(MatchExternalKvPrefixResponse r, String worker) {
        return r.getMatchesList().stream()
                .filter(m -> m.getWorkerId().equals(worker))
                .mapToInt(m -> m.getMatchedPrefixBlocks())
                .findFirst()
                .orElse(0);
    }

    /** One worker's holdings in a MatchExternalKv answer: hash → its tiers, in the order the answer lists them. */
    static Map<Long, List<TierType>> held(MatchExternalKvResponse r, String worker) {
        Map<Long, List<TierType>> out = new LinkedHashMap<>();
        for (ExternalKvNodeMatch m : r.getMatchesList()) {
            if (m.getWorkerId().equals(worker)) {
                for (TierHashes t : m.getHashesByTierList()) {
                    for (long h : t.getHashesList()) {
                        out.computeIfAbsent(h, x -> new ArrayList<>()).add(t.getTier());
                    }
                }
            }
        }
        return out;
    }

    /** What a call sent without the generated stub ended with: its status and its one answer, if any. */
    record Raw(GrpcStatus status, String message, Buffer answer) {}

    /**
     * Sends {@code body} as the one message of {@code method} of the KVIndexer service, with headers the generated
     * client cannot set and a client deadline when {@code timeoutMillis > 0}.
     */
    Raw raw(String method, byte[] body, Consumer<MultiMap> headers, long timeoutMillis) throws Exception {
        return get(grpc.request(SocketAddress.inetSocketAddress(port, "127.0.0.1"))
                .compose(req -> {
                    req.fullMethodName("kv_indexer.v1.KVIndexer/" + method);
                    headers.accept(req.headers());
                    if (timeoutMillis > 0) {
                        req.timeout(timeoutMillis, TimeUnit.MILLISECONDS);
                    }
                    return req.send(Buffer.buffer(body));
                })
                .compose(resp -> {
                    Buffer[] last = new Buffer[1];
                    resp.handler(b -> last[0] = b);
                    return resp.end()
                            .transform(done ->
                                    Future.succeededFuture(new Raw(resp.status(), resp.statusMessage(), last[0])));
                }));
    }

    Raw raw(String method, byte[] body, Consumer<MultiMap> headers) throws Exception {
        return raw(method, body, headers, 0);
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
