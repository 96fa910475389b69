package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.action;
import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.clear;
import static dev.kvindexer.grpc.GrpcFixture.get;
import static dev.kvindexer.grpc.GrpcFixture.held;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static dev.kvindexer.grpc.GrpcFixture.revoke;
import static dev.kvindexer.grpc.GrpcFixture.status;
import static dev.kvindexer.grpc.v1.TierType.TIER_HBM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchResponse;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ExpectedWorker;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.GetExternalKvHitCountsRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.MatchExternalKvRequest;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.support.Await;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.StatusException;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gRPC edge against odd and hostile input: bearer tokens, unknown fields, bytes that are not protobuf, values out
 * of range, the prefix in-flight limit and client deadlines; each refusal with SGLang's status and no change of state.
 */
class GrpcEdgeTest {
    private static final String TOKEN = "edge-test-token";
    private static final String APPLY = "ApplyExternalKvBatch";

    /** Open to all, token on the three changing methods, token on every method. */
    private static GrpcFixture open;

    private static GrpcFixture guarded;
    private static GrpcFixture guardedAll;

    @BeforeAll
    static void start() throws Exception {
        open = new GrpcFixture();
        guarded = new GrpcFixture(32, new SecurityConfig(TOKEN, false, null, null));
        guardedAll = new GrpcFixture(32, new SecurityConfig(TOKEN, true, null, null));
    }

    @AfterAll
    static void stop() throws Exception {
        open.close();
        guarded.close();
        guardedAll.close();
    }

    private static Consumer<MultiMap> bearer(String token) {
        return h -> h.set("authorization", "Bearer " + token);
    }

    private static final Consumer<MultiMap> NO_HEADERS = h -> {};

    // ---- (a) bearer token ----

    @Test
    void aChangeNeedsTheTokenAndIsRefusedWithoutIt() throws Exception {
        byte[] body =
                batch("auth-w", "10.0.0.1:9000", 1, report(TIER_HBM, 7001)).toByteArray();
        assertEquals(
                GrpcStatus.UNAUTHENTICATED, guarded.raw(APPLY, body, NO_HEADERS).status());
        assertEquals(
                GrpcStatus.UNAUTHENTICATED,
                guarded.raw(APPLY, body, bearer("not-" + TOKEN)).status());
        assertEquals(
                GrpcStatus.UNAUTHENTICATED,
                guarded.raw(APPLY, body, h -> h.set("authorization", TOKEN)).status(),
                "the token without the Bearer scheme");
        assertEquals(0, guarded.match(7001).getMatchesCount(), "a refused call changes nothing");
        assertEquals(0, guarded.service.workers());

        GrpcFixture.Raw ok = guarded.raw(APPLY, body, bearer(TOKEN));
        assertEquals(GrpcStatus.OK, ok.status());
        assertEquals(
                1,
                ApplyExternalKvBatchResponse.parseFrom(ok.answer().getBytes()).getAppliedSeq());
        assertEquals(1, guarded.match(7001).getMatchesCount());
    }

    @Test
    void theRecoveryMethodsNeedTheTokenToo() throws Exception {
        byte[] configure = ConfigureExpectedWorkersRequest.newBuilder()
                .addWorkers(ExpectedWorker.newBuilder().setWorkerId("auth-c"))
                .build()
                .toByteArray();
        byte[] replace = ReplaceExternalKvSnapshotRequest.newBuilder()
                .setWorkerId("auth-c")
                .setWorkerEpoch("e")
                .build()
                .toByteArray();
        assertEquals(
                GrpcStatus.UNAUTHENTICATED,
                guarded.raw("ConfigureExpectedWorkers", configure, NO_HEADERS).status());
        assertEquals(
                GrpcStatus.UNAUTHENTICATED,
                guarded.raw("ReplaceExternalKvSnapshot", replace, NO_HEADERS).status());
        // The refused Configure would have removed every other worker; the one applied below must stay.
        assertEquals(
                GrpcStatus.OK,
                guarded.raw(APPLY, batch("auth-stays", "a", 1).toByteArray(), bearer(TOKEN))
                        .status());
        assertEquals(
                GrpcStatus.UNAUTHENTICATED,
                guarded.raw("ConfigureExpectedWorkers", configure, NO_HEADERS).status());
        assertTrue(guarded.service.workers() >= 1);
    }

    @Test
    void queriesNeedNoTokenUnlessEveryMethodIsGuarded() throws Exception {
        MatchExternalKvRequest match =
                MatchExternalKvRequest.newBuilder().addHashes(1).build();
        MatchExternalKvPrefixRequest prefix =
                MatchExternalKvPrefixRequest.newBuilder().addHashes(1).build();
        GetExternalKvHitCountsRequest hits =
                GetExternalKvHitCountsRequest.newBuilder().addHashes(1).build();
        assertEquals(GrpcStatus.OK, status(guarded.client.matchExternalKv(match)));
        assertEquals(GrpcStatus.OK, status(guarded.client.matchExternalKvPrefix(prefix)));
        assertEquals(GrpcStatus.OK, status(guarded.client.getExternalKvHitCounts(hits)));

        assertEquals(GrpcStatus.UNAUTHENTICATED, status(guardedAll.client.matchExternalKv(match)));
        assertEquals(GrpcStatus.UNAUTHENTICATED, status(guardedAll.client.matchExternalKvPrefix(prefix)));
        assertEquals(GrpcStatus.UNAUTHENTICATED, status(guardedAll.client.getExternalKvHitCounts(hits)));
        assertEquals(
                GrpcStatus.OK,
                guardedAll
                        .raw("MatchExternalKv", match.toByteArray(), bearer(TOKEN))
                        .status());
        assertEquals(
                GrpcStatus.OK,
                guardedAll
                        .raw("MatchExternalKvPrefix", prefix.toByteArray(), bearer(TOKEN))
                        .status());
    }

    // ---- (b) unknown fields ----

    @Test
    void unknownFieldsAreSkipped() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes(batch("unknown-fields", "10.0.0.1:9000", 1, report(TIER_HBM, 7101))
                .toByteArray());
        // Field 5, varint 150: the worker incarnation of an old SGLang version, reserved now.
        bytes.writeBytes(new byte[] {(5 << 3), (byte) 0x96, 0x01});
        // Field 99, length-delimited "abc": something a newer version might send.
        bytes.writeBytes(new byte[] {(byte) 0x9A, 0x06, 3, 'a', 'b', 'c'});
        assertEquals(
                GrpcStatus.OK, open.raw(APPLY, bytes.toByteArray(), NO_HEADERS).status());
        assertEquals(1, open.match(7101).getMatchesCount());
    }

    // ---- (c) bytes that are not protobuf ----

    @Test
    void bytesThatAreNotProtobufAreAnInternalErrorAsTonicAnswersAndTheServerKeepsServing() throws Exception {
        byte[] junk = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF};
        GrpcFixture.Raw apply = open.raw(APPLY, junk, NO_HEADERS);
        assertEquals(GrpcStatus.INTERNAL, apply.status());
        assertTrue(apply.message().startsWith("failed to decode Protobuf message"), apply.message());
        assertEquals(
                GrpcStatus.INTERNAL,
                open.raw("MatchExternalKvPrefix", junk, NO_HEADERS).status());
        open.apply(batch("after-junk", "10.0.0.1:9000", 1, report(TIER_HBM, 7201)));
        assertEquals(1, open.prefix(7201).getBestPrefixBlocks());
    }

    // ---- (d) values out of range ----

    private static ExternalKvAction withTier(int tier) {
        return report(TIER_HBM, 1).toBuilder().setTierValue(tier).build();
    }

    private static ExternalKvAction withType(int type) {
        return report(TIER_HBM, 1).toBuilder().setTypeValue(type).build();
    }

    @Test
    void outOfRangeValuesAreRefusedAndChangeNothing() throws Exception {
        long probe = 7301;
        long[] many = LongStream.rangeClosed(0, RequestChecks.MAX_HASHES_PER_REQUEST)
                .map(i -> 7_400_000 + i)
                .toArray();
        ExternalKvAction[] tooManyActions = new ExternalKvAction[RequestChecks.MAX_ACTIONS_PER_BATCH + 1];
        Arrays.fill(tooManyActions, clear(TIER_HBM));
        long[] half = LongStream.range(0, 8_193).map(i -> 7_500_000 + i).toArray();
        long[] otherHalf = LongStream.range(0, 8_193).map(i -> 7_600_000 + i).toArray();
        Map<String, Object[]> cases = new LinkedHashMap<>();
        cases.put("tier 7", new Object[] {GrpcStatus.INVALID_ARGUMENT, withTier(7)});
        cases.put("tier 0", new Object[] {GrpcStatus.INVALID_ARGUMENT, withTier(0)});
        cases.put("tier -1", new Object[] {GrpcStatus.INVALID_ARGUMENT, withTier(-1)});
        cases.put("type 0", new Object[] {GrpcStatus.INVALID_ARGUMENT, withType(0)});
        cases.put("type -3", new Object[] {GrpcStatus.INVALID_ARGUMENT, withType(-3)});
        cases.put("type 999", new Object[] {GrpcStatus.INVALID_ARGUMENT, withType(999)});
        cases.put("a report of nothing", new Object[] {GrpcStatus.INVALID_ARGUMENT, report(TIER_HBM)});
        cases.put("a revoke of nothing", new Object[] {GrpcStatus.INVALID_ARGUMENT, revoke(TIER_HBM)});
        cases.put("misaligned masks", new Object[] {
            GrpcStatus.INVALID_ARGUMENT,
            report(TIER_HBM, 1, 2).toBuilder().addComponentMasks(1).build()
        });
        cases.put("misaligned sizes", new Object[] {
            GrpcStatus.INVALID_ARGUMENT,
            report(TIER_HBM, 1, 2).toBuilder()
                    .addBlockSizes(16)
                    .addBlockSizes(16)
                    .addBlockSizes(16)
                    .build()
        });
        // Alignment is checked on every action type, even those that ignore the arrays.
        cases.put("misaligned masks on a revoke", new Object[] {
            GrpcStatus.INVALID_ARGUMENT,
            revoke(TIER_HBM, 1).toBuilder()
                    .addComponentMasks(1)
                    .addComponentMasks(1)
                    .build()
        });
        cases.put("16,385 hashes", new Object[] {GrpcStatus.RESOURCE_EXHAUSTED, report(TIER_HBM, many)});
        cases.put(
                "16,386 hashes over two actions",
                new Object[] {GrpcStatus.RESOURCE_EXHAUSTED, report(TIER_HBM, half), report(TIER_HBM, otherHalf)});
        // The count checks come before the per-action checks: a bad tier behind too many hashes is exhausted.
        cases.put(
                "16,385 hashes and tier 0",
                new Object[] {GrpcStatus.RESOURCE_EXHAUSTED, withTier(0), report(TIER_HBM, many)});
        cases.put("257 actions", new Object[] {GrpcStatus.RESOURCE_EXHAUSTED, tooManyActions});
        for (Map.Entry<String, Object[]> c : cases.entrySet()) {
            ApplyExternalKvBatchRequest.Builder b =
                    batch("range-w", "10.0.0.1:9000", 1, report(TIER_HBM, probe)).toBuilder();
            for (int i = 1; i < c.getValue().length; i++) {
                Object a = c.getValue()[i];
                if (a instanceof ExternalKvAction[] all) {
                    b.addAllActions(List.of(all));
                } else {
                    b.addActions((ExternalKvAction) a);
                }
            }
            assertEquals(c.getValue()[0], status(open.client.applyExternalKvBatch(b.build())), c.getKey());
            // The valid REPORT ahead of the bad action was not applied either: the batch is checked whole first.
            assertEquals(0, open.match(probe).getMatchesCount(), c.getKey());
            assertEquals(0, open.match(1, 2, many[0], half[0]).getMatchesCount(), c.getKey());
        }
        // A CLEAR may carry hashes (they are ignored) and may carry none.
        ApplyExternalKvBatchRequest clears = batch(
                "range-w",
                "10.0.0.1:9000",
                1,
                report(TIER_HBM, probe),
                clear(TIER_HBM),
                action(ExternalKvActionType.ACTION_CLEAR_ALL_AT_TIER, TIER_HBM, 9, 9, 9),
                report(TIER_HBM, probe));
        assertEquals(GrpcStatus.OK, status(open.client.applyExternalKvBatch(clears)));
        assertEquals(List.of(TIER_HBM), held(open.match(probe), "range-w").get(probe));
    }

    @Test
    void queriesOutOfRangeAreRefused() throws Exception {
        List<Long> many = LongStream.rangeClosed(0, RequestChecks.MAX_HASHES_PER_REQUEST)
                .boxed()
                .toList();
        assertEquals(
                GrpcStatus.INVALID_ARGUMENT,
                status(open.client.matchExternalKv(MatchExternalKvRequest.getDefaultInstance())));
        assertEquals(
                GrpcStatus.RESOURCE_EXHAUSTED,
                status(open.client.matchExternalKv(
                        MatchExternalKvRequest.newBuilder().addAllHashes(many).build())));
        assertEquals(
                GrpcStatus.INVALID_ARGUMENT,
                status(open.client.getExternalKvHitCounts(GetExternalKvHitCountsRequest.getDefaultInstance())));
        assertEquals(
                GrpcStatus.RESOURCE_EXHAUSTED,
                status(open.client.getExternalKvHitCounts(GetExternalKvHitCountsRequest.newBuilder()
                        .addAllHashes(many)
                        .build())));
        // The prefix query has no such cap.
        assertEquals(
                GrpcStatus.OK,
                status(open.client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                        .addAllHashes(many)
                        .build())));
    }

    // ---- (e) the prefix in-flight limit ----

    @Test
    void aPrefixQueryPastTheLimitIsRefusedAtOnceNotQueued() throws Exception {
        ExternalKvService service = new ExternalKvService(1);
        service.apply(batch("inflight-w", "10.0.0.1:9000", 1, report(TIER_HBM, 1, 2)));
        MatchExternalKvPrefixRequest query = MatchExternalKvPrefixRequest.newBuilder()
                .addHashes(1)
                .addHashes(2)
                .build();
        ExecutorService second = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<MatchExternalKvPrefixResponse> held;
            // A change in progress: the write lock is held, so a query that got its permit waits for the read lock.
            service.lock.writeLock().lock();
            try {
                held = CompletableFuture.supplyAsync(() -> service.matchPrefix(query), second)
                        .thenCompose(f -> f.toCompletionStage());
                Await.until(
                        "the second query holds the only permit", Await.PATIENCE, () -> service.prefixInflight() == 1);
                StatusException refused = assertThrows(StatusException.class, () -> service.matchPrefix(query));
                assertEquals(GrpcStatus.RESOURCE_EXHAUSTED, refused.status());
                // An empty query is refused for what it is before any permit is asked for.
                StatusException empty = assertThrows(
                        StatusException.class,
                        () -> service.matchPrefix(MatchExternalKvPrefixRequest.getDefaultInstance()));
                assertEquals(GrpcStatus.INVALID_ARGUMENT, empty.status());
                assertEquals(1, service.prefixInflight(), "the refused query gave back nothing it did not take");
            } finally {
                service.lock.writeLock().unlock();
            }
            MatchExternalKvPrefixResponse answer = held.get(Await.PATIENCE.toSeconds(), TimeUnit.SECONDS);
            assertEquals(2, answer.getBestPrefixBlocks());
            assertEquals(0, service.prefixInflight());
            assertEquals(2, GrpcFixture.get(service.matchPrefix(query)).getBestPrefixBlocks(), "the permit came back");
        } finally {
            second.shutdownNow();
        }
    }

    // ---- (f) client deadlines ----

    @Test
    void aQueryWithADeadlineServedInTimeIsAnswered() throws Exception {
        open.apply(batch("deadline-w", "10.0.0.1:9000", 1, report(TIER_HBM, 7701, 7702)));
        byte[] query = MatchExternalKvPrefixRequest.newBuilder()
                .addHashes(7701)
                .addHashes(7702)
                .build()
                .toByteArray();
        GrpcFixture.Raw r = open.raw("MatchExternalKvPrefix", query, NO_HEADERS, TimeUnit.SECONDS.toMillis(30));
        assertEquals(GrpcStatus.OK, r.status());
        assertEquals(
                2,
                MatchExternalKvPrefixResponse.parseFrom(r.answer().getBytes()).getBestPrefixBlocks());
        // Applies carry deadlines too and are never shed.
        byte[] apply =
                batch("deadline-w", "10.0.0.1:9000", 2, report(TIER_HBM, 7703)).toByteArray();
        assertEquals(
                GrpcStatus.OK,
                open.raw(APPLY, apply, NO_HEADERS, TimeUnit.SECONDS.toMillis(30))
                        .status());
        assertEquals(1, open.match(7703).getMatchesCount());
    }

    /**
     * Sends a call's headers, carrying {@code grpc-timeout: 1m}, and its one message only after a delay, over plain
     * HTTP/2 (the gRPC client sends both at once). The server stamps the arrival at the headers, so by the time the
     * message is read the caller's millisecond is long spent; returns the call's grpc-status.
     */
    private static int sentAfterItsDeadline(String method, byte[] message) throws Exception {
        HttpClient http = open.vertx.createHttpClient(
                new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2).setHttp2ClearTextUpgrade(false));
        try {
            HttpClientRequest req =
                    get(http.request(HttpMethod.POST, open.port, "127.0.0.1", "/kv_indexer.v1.KVIndexer/" + method));
            req.putHeader("content-type", "application/grpc")
                    .putHeader("te", "trailers")
                    .putHeader("grpc-timeout", "1m");
            // Read the whole answer as it comes: the trailers carry the status.
            Future<HttpClientResponse> answered =
                    req.response().compose(r -> r.body().map(body -> r));
            get(req.sendHead());
            Buffer frame = Buffer.buffer()
                    .appendByte((byte) 0)
                    .appendInt(message.length)
                    .appendBytes(message);
            // A delay, not a synchronisation: it only makes the deadline lapse before the message is read. The
            // assertions hold whatever the timing, as these methods must never be shed.
            Promise<Void> sent = Promise.promise();
            open.vertx.setTimer(50, t -> req.end(frame).onComplete(sent));
            get(sent.future());
            HttpClientResponse resp = get(answered);
            String status = resp.getTrailer("grpc-status");
            return Integer.parseInt(status != null ? status : resp.getHeader("grpc-status"));
        } finally {
            get(http.close());
        }
    }

    @Test
    void onlyPrefixQueriesAreShedForASpentDeadline() throws Exception {
        byte[] apply =
                batch("shed-w", "10.0.0.1:9000", 1, report(TIER_HBM, 7801)).toByteArray();
        assertEquals(GrpcStatus.OK.code, sentAfterItsDeadline(APPLY, apply), "an apply is never shed");
        assertEquals(1, open.match(7801).getMatchesCount());
        byte[] match =
                MatchExternalKvRequest.newBuilder().addHashes(7801).build().toByteArray();
        assertEquals(GrpcStatus.OK.code, sentAfterItsDeadline("MatchExternalKv", match));
    }
}
