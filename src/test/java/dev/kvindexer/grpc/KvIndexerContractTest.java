package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.get;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static dev.kvindexer.grpc.GrpcFixture.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvNodeMatch;
import dev.kvindexer.grpc.v1.GetExternalKvHitCountsRequest;
import dev.kvindexer.grpc.v1.HitCountEntry;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.MatchExternalKvRequest;
import dev.kvindexer.grpc.v1.TierType;
import io.vertx.grpc.common.GrpcStatus;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * SGLang's own contract cases for the KVIndexer service (their tests/grpc_contract.rs), driven over real gRPC on
 * 127.0.0.1 with the client generated from the proto: the same inputs, the same answers and status codes.
 */
class KvIndexerContractTest {
    private static GrpcFixture g;

    @BeforeAll
    static void start() throws Exception {
        g = new GrpcFixture();
    }

    @AfterAll
    static void stop() throws Exception {
        g.close();
    }

    private static List<Long> longs(long... values) {
        return LongStream.of(values).boxed().toList();
    }

    @Test
    void multipleWorkersShareOneIndexer() throws Exception {
        get(g.client.applyExternalKvBatch(
                batch("worker-0-t2", "10.0.0.1:9000", 1, report(TierType.TIER_HBM, 101, 103))));
        get(g.client.applyExternalKvBatch(
                batch("worker-1-t2", "10.0.0.2:9000", 1, report(TierType.TIER_HBM, 102, 103))));
        List<ExternalKvNodeMatch> matches = get(g.client.matchExternalKv(MatchExternalKvRequest.newBuilder()
                        .addAllHashes(longs(101, 102, 103))
                        .build()))
                .getMatchesList();
        assertEquals(
                List.of("worker-0-t2", "worker-1-t2"),
                matches.stream().map(ExternalKvNodeMatch::getWorkerId).sorted().toList());
        get(g.client.matchExternalKv(MatchExternalKvRequest.newBuilder()
                .addAllHashes(longs(101))
                .setCountAsHit(true)
                .build()));
        List<HitCountEntry> counts = get(g.client.getExternalKvHitCounts(GetExternalKvHitCountsRequest.newBuilder()
                        .addAllHashes(longs(101, 104))
                        .build()))
                .getEntriesList();
        assertEquals(1, counts.size(), "a hash never counted has no entry");
        assertEquals(101, counts.get(0).getHash());
        assertEquals(1, counts.get(0).getHitCountTotal());
    }

    @Test
    void validationErrorsAreInvalidArgument() throws Exception {
        assertEquals(
                GrpcStatus.INVALID_ARGUMENT,
                status(g.client.applyExternalKvBatch(batch("", "10.0.0.1:9000", 1, report(TierType.TIER_HBM, 1)))));
        ExternalKvAction unknownType = ExternalKvAction.newBuilder()
                .setTypeValue(999)
                .setTier(TierType.TIER_HBM)
                .addHashes(1)
                .build();
        assertEquals(
                GrpcStatus.INVALID_ARGUMENT,
                status(g.client.applyExternalKvBatch(batch("w-t3", "10.0.0.1:9000", 1, unknownType))));
        assertEquals(
                GrpcStatus.OK,
                status(g.client.matchExternalKv(
                        MatchExternalKvRequest.newBuilder().addHashes(1).build())));
        assertTrue(
                get(g.client.matchExternalKv(
                                MatchExternalKvRequest.newBuilder().addHashes(1).build()))
                        .getMatchesList()
                        .stream()
                        .noneMatch(m -> m.getWorkerId().equals("w-t3")),
                "a refused batch changes nothing, not even the worker table");
    }

    @Test
    void prefixMatchesLongestFirst() throws Exception {
        get(g.client.applyExternalKvBatch(
                batch("long-t4", "10.0.0.1:9000", 1, report(TierType.TIER_HBM, 401, 402, 403))));
        get(g.client.applyExternalKvBatch(batch("short-t4", "10.0.0.2:9000", 1, report(TierType.TIER_HBM, 401))));
        MatchExternalKvPrefixResponse r = get(g.client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                .addAllHashes(longs(401, 402, 403))
                .build()));
        assertEquals(3, r.getBestPrefixBlocks());
        assertEquals(3, r.getBlocksRead());
        assertEquals(2, r.getMatchesCount());
        assertEquals("long-t4", r.getMatches(0).getWorkerId());
        assertEquals(3, r.getMatches(0).getMatchedPrefixBlocks());
        assertEquals("10.0.0.1:9000", r.getMatches(0).getWorkerAddress());
        assertEquals("short-t4", r.getMatches(1).getWorkerId());
        assertEquals(1, r.getMatches(1).getMatchedPrefixBlocks());
    }

    @Test
    void prefixScansMoreThanOneApplyChunk() throws Exception {
        long base = 1L << 40;
        long[] first = LongStream.range(base, base + RequestChecks.MAX_HASHES_PER_REQUEST)
                .toArray();
        get(g.client.applyExternalKvBatch(
                batch("large-prefix-worker", "10.0.0.1:9000", 0, report(TierType.TIER_HBM, first))));
        get(g.client.applyExternalKvBatch(batch(
                "large-prefix-worker",
                "10.0.0.1:9000",
                1,
                report(TierType.TIER_HBM, base + RequestChecks.MAX_HASHES_PER_REQUEST))));
        MatchExternalKvPrefixResponse r = get(g.client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                .addAllHashes(LongStream.rangeClosed(base, base + RequestChecks.MAX_HASHES_PER_REQUEST)
                        .boxed()
                        .toList())
                .build()));
        assertEquals(16_385, r.getBestPrefixBlocks());
        assertEquals(16_385, r.getBlocksRead());
    }

    @Test
    void aQueryLargerThanFourMebibytesIsServed() throws Exception {
        get(g.client.applyExternalKvBatch(
                batch("large-wire-worker", "10.0.0.1:9000", 1, report(TierType.TIER_HBM, -1))));
        MatchExternalKvPrefixRequest.Builder q =
                MatchExternalKvPrefixRequest.newBuilder().addHashes(-1);
        for (long h = 1; h < 600_000; h++) {
            q.addHashes(h);
        }
        MatchExternalKvPrefixRequest query = q.build();
        assertTrue(query.getSerializedSize() > 4 * 1024 * 1024);
        MatchExternalKvPrefixResponse r = get(g.client.matchExternalKvPrefix(query));
        assertEquals(1, r.getBestPrefixBlocks());
    }

    @Test
    void aQueryPastEightMebibytesIsOutOfRange() throws Exception {
        MatchExternalKvPrefixRequest.Builder q = MatchExternalKvPrefixRequest.newBuilder();
        for (long h = 0; h < GrpcVerticle.MAX_MESSAGE_BYTES / 8 + 1_024; h++) {
            q.addHashes(h);
        }
        assertEquals(GrpcStatus.OUT_OF_RANGE, status(g.client.matchExternalKvPrefix(q.build())));
    }

    @Test
    void anEmptyPrefixQueryIsInvalid() throws Exception {
        assertEquals(
                GrpcStatus.INVALID_ARGUMENT,
                status(g.client.matchExternalKvPrefix(
                        MatchExternalKvPrefixRequest.newBuilder().build())));
    }

    @Test
    void anEmptyBatchIsAppliedAndMakesItsWorkerReady() throws Exception {
        ApplyExternalKvBatchRequest empty = ApplyExternalKvBatchRequest.newBuilder()
                .setWorkerId("worker-empty")
                .build();
        assertEquals(GrpcStatus.OK, status(g.client.applyExternalKvBatch(empty)));
    }
}
