package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.get;
import static dev.kvindexer.grpc.GrpcFixture.prefixOf;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static dev.kvindexer.grpc.GrpcFixture.spec;
import static dev.kvindexer.grpc.GrpcFixture.status;
import static dev.kvindexer.grpc.GrpcFixture.tierHashes;
import static dev.kvindexer.grpc.v1.TierType.TIER_DRAM;
import static dev.kvindexer.grpc.v1.TierType.TIER_HBM;
import static dev.kvindexer.grpc.v1.TierType.TIER_SSD;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchResponse;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersResponse;
import dev.kvindexer.grpc.v1.ExpectedWorker;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.grpc.v1.TierHashes;
import dev.kvindexer.grpc.v1.TierType;
import dev.kvindexer.grpc.v1.WorkerCacheSpec;
import io.vertx.grpc.common.GrpcStatus;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * SGLang's recovery contract (ConfigureExpectedWorkers, ReplaceExternalKvSnapshot, fenced applies) and its per-worker
 * prefix rules for cache specs (the scanner examples), over real gRPC; each test on a fresh server, as Configure
 * changes the whole worker table.
 */
class ExternalKvRecoveryTest {
    private GrpcFixture g;

    @BeforeEach
    void start() throws Exception {
        g = new GrpcFixture();
    }

    @AfterEach
    void stop() throws Exception {
        g.close();
    }

    private static ExpectedWorker expected(String id, String address) {
        return ExpectedWorker.newBuilder()
                .setWorkerId(id)
                .setWorkerAddress(address)
                .build();
    }

    private static ConfigureExpectedWorkersRequest workers(ExpectedWorker... workers) {
        return ConfigureExpectedWorkersRequest.newBuilder()
                .addAllWorkers(List.of(workers))
                .build();
    }

    /** {total_workers, ready_workers} after the call. */
    private List<Integer> configure(ExpectedWorker... workers) throws Exception {
        ConfigureExpectedWorkersResponse r = get(g.client.configureExpectedWorkers(workers(workers)));
        return List.of(r.getTotalWorkers(), r.getReadyWorkers());
    }

    private static ReplaceExternalKvSnapshotRequest snapshot(
            String id, String address, String epoch, long seq, TierHashes... tiers) {
        return ReplaceExternalKvSnapshotRequest.newBuilder()
                .setWorkerId(id)
                .setWorkerAddress(address)
                .setWorkerEpoch(epoch)
                .setAppliedSeq(seq)
                .addAllHashesByTier(List.of(tiers))
                .build();
    }

    private long replace(String id, String address, String epoch, long seq, TierHashes... tiers) throws Exception {
        return get(g.client.replaceExternalKvSnapshot(snapshot(id, address, epoch, seq, tiers)))
                .getAppliedSeq();
    }

    /** An apply as the recovery bridge sends it: epoch and exact sequence enforced. */
    private static ApplyExternalKvBatchRequest fenced(
            String id, String address, String epoch, long seq, ExternalKvAction... actions) {
        return batch(id, address, seq, actions).toBuilder()
                .setWorkerEpoch(epoch)
                .setEnforceSequence(true)
                .build();
    }

    private GrpcStatus statusOf(ApplyExternalKvBatchRequest r) throws Exception {
        return status(g.client.applyExternalKvBatch(r));
    }

    private Map<Long, List<TierType>> held(String worker, long... hashes) throws Exception {
        return GrpcFixture.held(g.match(hashes), worker);
    }

    // ---- recovery ----

    @Test
    void configureThenReplaceMakesWorkersReadyOneByOne() throws Exception {
        assertEquals(List.of(2, 0), configure(expected("w1", "http://w1"), expected("w2", "http://w2")));
        assertEquals(2, replace("w1", "http://w1", "e1", 2, tierHashes(TIER_HBM, 1, 2)));
        // Configure again with the same list reads the counts: it never changes an existing worker's readiness.
        assertEquals(List.of(2, 1), configure(expected("w1", "http://w1"), expected("w2", "http://w2")));
        assertEquals(4, replace("w2", "http://w2", "e2", 4, tierHashes(TIER_HBM, 1)));
        assertEquals(List.of(2, 2), configure(expected("w1", "http://w1"), expected("w2", "http://w2")));
        MatchExternalKvPrefixResponse r = g.prefix(1, 2);
        assertEquals(2, r.getBestPrefixBlocks());
        assertEquals("http://w1", r.getMatches(0).getWorkerAddress());
        assertEquals(1, prefixOf(r, "w2"));
    }

    @Test
    void aFencedApplyIsAppliedOnceAndAGapDropsTheWorker() throws Exception {
        configure(expected("w", "http://w"));
        replace("w", "http://w", "e", 2, tierHashes(TIER_HBM, 1));
        ApplyExternalKvBatchRequest next = fenced("w", "http://w", "e", 3, report(TIER_HBM, 2));
        ApplyExternalKvBatchResponse first = g.apply(next);
        assertEquals(3, first.getAppliedSeq());
        assertFalse(first.getDuplicate());
        ApplyExternalKvBatchResponse again = g.apply(next);
        assertEquals(3, again.getAppliedSeq());
        assertTrue(again.getDuplicate());
        // An older seq is a duplicate too: answered with the stored seq, nothing applied, the address not refreshed.
        ApplyExternalKvBatchResponse old = g.apply(fenced("w", "http://moved", "e", 1, report(TIER_HBM, 7)));
        assertEquals(3, old.getAppliedSeq());
        assertTrue(old.getDuplicate());
        assertEquals(Map.of(), held("w", 7));
        assertEquals("http://w", g.match(1).getMatches(0).getAddress());
        g.countingMatch(1, 2);
        assertEquals(Map.of(1L, 1L, 2L, 1L), g.hits(1, 2));

        // Seq 5 after 3: a gap. The worker loses everything, its counters too, and is no longer ready.
        assertEquals(GrpcStatus.FAILED_PRECONDITION, statusOf(fenced("w", "http://w", "e", 5)));
        assertEquals(0, g.match(1, 2).getMatchesCount());
        assertEquals(0, g.service.blocks());
        assertEquals(Map.of(), g.hits(1, 2));
        assertEquals(List.of(1, 0), configure(expected("w", "http://w")));
        // Until a new snapshot, every fenced apply is refused, even the one that would have been next.
        assertEquals(GrpcStatus.FAILED_PRECONDITION, statusOf(fenced("w", "http://w", "e", 4, report(TIER_HBM, 9))));
        assertEquals(Map.of(), held("w", 9));
        replace("w", "http://w", "e2", 10, tierHashes(TIER_HBM, 1));
        assertEquals(
                11,
                g.apply(fenced("w", "http://w", "e2", 11, report(TIER_HBM, 2))).getAppliedSeq());
        assertEquals(Map.of(1L, List.of(TIER_HBM), 2L, List.of(TIER_HBM)), held("w", 1, 2));
        // A plain apply in between moves neither the epoch nor the sequence: 12 is still the next one.
        g.apply(batch("w", "http://w", 99, report(TIER_HBM, 3)));
        ApplyExternalKvBatchResponse twelve = g.apply(fenced("w", "http://w", "e2", 12));
        assertEquals(12, twelve.getAppliedSeq());
        assertFalse(twelve.getDuplicate());
    }

    @Test
    void configureWithoutAWorkerRemovesItAndItsBlocks() throws Exception {
        configure(expected("w1", "http://w1"), expected("w2", "http://w2"));
        replace("w1", "http://w1", "e1", 1, tierHashes(TIER_HBM, 1));
        replace("w2", "http://w2", "e2", 1, tierHashes(TIER_HBM, 2));
        g.countingMatch(2);
        assertEquals(List.of(1, 1), configure(expected("w1", "http://w1")));
        assertEquals(Map.of(1L, List.of(TIER_HBM)), held("w1", 1, 2));
        assertEquals(0, g.match(2).getMatchesCount());
        assertEquals(1, g.service.blocks());
        assertEquals(Map.of(), g.hits(2), "the removed block's counter goes with it");
        // w2 is not configured any more: its snapshot is refused.
        assertEquals(
                GrpcStatus.FAILED_PRECONDITION,
                status(g.client.replaceExternalKvSnapshot(
                        snapshot("w2", "http://w2", "e2", 2, tierHashes(TIER_HBM, 2)))));
    }

    @Test
    void configureRemovesWorkersMadeByPlainAppliesAndAnEmptyListRemovesAll() throws Exception {
        g.apply(batch("plain", "http://plain", 1, report(TIER_HBM, 5)));
        configure(expected("w1", "http://w1"));
        assertEquals(0, g.match(5).getMatchesCount());
        assertEquals(1, g.service.workers());
        replace("w1", "http://w1", "e", 1, tierHashes(TIER_HBM, 1));
        assertEquals(List.of(0, 0), configure());
        assertEquals(0, g.service.blocks());
    }

    @Test
    void configureSetsTheSpecEveryTimeAndKeepsHoldings() throws Exception {
        configure(expected("w", "http://w"));
        replace("w", "http://w", "e", 1, tierHashes(TIER_DRAM, 1));
        assertEquals(1, g.prefix(1).getBestPrefixBlocks());
        // A spec serving FULL from HBM only: the worker's legacy DRAM block no longer serves a prefix.
        configure(expected("w", "http://w").toBuilder()
                .setCacheSpec(spec(1, 0, 2, 0, 0))
                .build());
        assertEquals(0, g.prefix(1).getBestPrefixBlocks());
        // Configured again without a spec: the spec is cleared, not kept.
        assertEquals(List.of(1, 1), configure(expected("w", "http://w")));
        assertEquals(1, g.prefix(1).getBestPrefixBlocks());
    }

    @Test
    void aSnapshotReplacesEverythingTheWorkerHeld() throws Exception {
        configure(expected("w", "http://w"));
        replace("w", "http://w", "e", 1, tierHashes(TIER_HBM, 1, 2), tierHashes(TIER_DRAM, 2));
        g.countingMatch(1, 2);
        replace("w", "http://w", "e", 5, tierHashes(TIER_HBM, 2, 3));
        assertEquals(Map.of(2L, List.of(TIER_HBM), 3L, List.of(TIER_HBM)), held("w", 1, 2, 3));
        // Block 2 was emptied before the snapshot re-added it: its counter went with it.
        assertEquals(Map.of(), g.hits(1, 2, 3));
        // An empty snapshot is valid and leaves the worker ready with nothing.
        replace("w", "http://w", "e", 6);
        assertEquals(0, g.service.blocks());
        assertEquals(List.of(1, 1), configure(expected("w", "http://w")));
    }

    @Test
    void aSnapshotOfAnUnconfiguredWorkerIsRefused() throws Exception {
        assertEquals(
                GrpcStatus.FAILED_PRECONDITION,
                status(g.client.replaceExternalKvSnapshot(
                        snapshot("ghost", "http://ghost", "e", 1, tierHashes(TIER_HBM, 1)))));
        assertEquals(0, g.match(1).getMatchesCount());
        assertEquals(0, g.service.workers());
        // A worker made by a plain apply counts as configured.
        g.apply(batch("plain", "http://plain", 1));
        assertEquals(3, replace("plain", "http://plain", "e", 3, tierHashes(TIER_HBM, 1)));
    }

    @Test
    void aFencedApplyNeedsAConfiguredWorkerWithASnapshotOfItsEpoch() throws Exception {
        assertEquals(
                GrpcStatus.FAILED_PRECONDITION, statusOf(fenced("ghost", "http://ghost", "e", 1, report(TIER_HBM, 1))));
        assertEquals(0, g.match(1).getMatchesCount());
        assertEquals(0, g.service.workers(), "a refused fenced apply makes no worker record");

        configure(expected("w", "http://w"));
        // Configured, but no snapshot yet: not ready.
        assertEquals(GrpcStatus.FAILED_PRECONDITION, statusOf(fenced("w", "http://w", "e", 1, report(TIER_HBM, 1))));
        assertEquals(0, g.match(1).getMatchesCount());

        replace("w", "http://w", "e", 2, tierHashes(TIER_HBM, 2));
        assertEquals(
                GrpcStatus.FAILED_PRECONDITION,
                statusOf(fenced("w", "http://moved", "other-epoch", 3, report(TIER_HBM, 1))));
        // Nothing changed: not the block, not the address, not readiness, not the sequence.
        assertEquals(Map.of(2L, List.of(TIER_HBM)), held("w", 1, 2));
        assertEquals("http://w", g.match(2).getMatches(0).getAddress());
        assertEquals(List.of(1, 1), configure(expected("w", "http://w")));
        assertFalse(g.apply(fenced("w", "http://w", "e", 3)).getDuplicate());

        // A plain apply makes its worker ready but gives it no epoch: an empty epoch is not "no epoch".
        g.apply(batch("plain", "http://plain", 1));
        assertEquals(GrpcStatus.FAILED_PRECONDITION, statusOf(fenced("plain", "http://plain", "", 2)));
    }

    @Test
    void configureRefusesEmptyAndRepeatedIdsAndChangesNothing() throws Exception {
        configure(expected("keep", "http://keep"));
        assertEquals(
                GrpcStatus.INVALID_ARGUMENT,
                status(g.client.configureExpectedWorkers(
                        workers(expected("a", "http://a"), expected("a", "http://a2")))));
        assertEquals(
                GrpcStatus.INVALID_ARGUMENT,
                status(g.client.configureExpectedWorkers(workers(expected("b", "http://b"), expected("", "")))));
        assertEquals(1, g.service.workers(), "a refused Configure removes and adds nobody");
        assertEquals(List.of(1, 0), configure(expected("keep", "http://keep")));
    }

    @Test
    void aSnapshotIsCheckedBeforeAnythingChanges() throws Exception {
        configure(expected("w", "http://w"));
        replace("w", "http://w", "e", 1, tierHashes(TIER_HBM, 1));
        TierHashes tooMany = tierHashes(
                TIER_HBM,
                LongStream.rangeClosed(0, RequestChecks.MAX_HASHES_PER_REQUEST).toArray());
        TierHashes misaligned =
                tierHashes(TIER_HBM, 5, 6).toBuilder().addComponentMasks(1).build();
        Map<ReplaceExternalKvSnapshotRequest, GrpcStatus> refused = Map.of(
                snapshot("", "http://w", "e", 2, tierHashes(TIER_HBM, 5)), GrpcStatus.INVALID_ARGUMENT,
                snapshot("w", "http://w", "", 2, tierHashes(TIER_HBM, 5)), GrpcStatus.INVALID_ARGUMENT,
                snapshot("w", "http://w", "e", 2, tierHashes(TierType.TIER_UNKNOWN, 5)), GrpcStatus.INVALID_ARGUMENT,
                snapshot("w", "http://w", "e", 2, tierHashes(TIER_HBM)), GrpcStatus.INVALID_ARGUMENT,
                snapshot("w", "http://w", "e", 2, misaligned), GrpcStatus.INVALID_ARGUMENT,
                snapshot("w", "http://w", "e", 2, tooMany), GrpcStatus.RESOURCE_EXHAUSTED);
        for (Map.Entry<ReplaceExternalKvSnapshotRequest, GrpcStatus> e : refused.entrySet()) {
            assertEquals(e.getValue(), status(g.client.replaceExternalKvSnapshot(e.getKey())));
            assertEquals(Map.of(1L, List.of(TIER_HBM)), held("w", 1, 5));
        }
    }

    // ---- the prefix rules per cache spec (SGLang's scanner examples) ----

    private MatchExternalKvPrefixResponse holdAndAsk(
            String worker, WorkerCacheSpec spec, long[] query, ExternalKvAction... actions) throws Exception {
        ApplyExternalKvBatchRequest b = batch(worker, "http://" + worker, 1, actions);
        g.apply(spec == null ? b : b.toBuilder().setCacheSpec(spec).build());
        return g.prefix(query);
    }

    private static long[] q(long... hashes) {
        return hashes;
    }

    private static int[] masks(int... m) {
        return m;
    }

    private static int[] sizes(int size, int count) {
        int[] s = new int[count];
        Arrays.fill(s, size);
        return s;
    }

    @Test
    void legacyCountsHeldBlocksUpToTheFirstGapAtAnyTierSsdIncluded() throws Exception {
        MatchExternalKvPrefixResponse r =
                holdAndAsk("legacy", null, q(1, 2, 3, 4, 5), report(TIER_HBM, 1, 2), report(TIER_SSD, 3, 5));
        assertEquals(3, prefixOf(r, "legacy"));
        assertEquals(5, r.getBlocksRead());
    }

    @Test
    void legacyWithComponentMasksFailsClosed() throws Exception {
        MatchExternalKvPrefixResponse r =
                holdAndAsk("masked", null, q(1, 2), report(TIER_HBM, q(1, 2), masks(1, 1), sizes(16, 2)));
        assertEquals(0, r.getBestPrefixBlocks());
        // Also when the masked block lies past the worker's first gap.
        g.apply(batch("late", "http://late", 1, report(TIER_HBM, 11), report(TIER_HBM, q(13), masks(1), sizes(16, 1))));
        assertEquals(0, prefixOf(g.prefix(11, 12, 13), "late"));
    }

    @Test
    void fullOnlyCountsFullFromItsTiers() throws Exception {
        // [HBM:FULL], [DRAM:FULL], [HBM:SWA only], [HBM:FULL] → 2.
        MatchExternalKvPrefixResponse r = holdAndAsk(
                "full",
                spec(1, 0, 6, 0, 0),
                q(1, 2, 3, 4),
                report(TIER_HBM, q(1, 3, 4), masks(1, 2, 1), sizes(16, 3)),
                report(TIER_DRAM, q(2), masks(1), sizes(16, 1)));
        assertEquals(2, prefixOf(r, "full"));
    }

    @Test
    void ssdNeverServesAWorkerWithASpec() throws Exception {
        MatchExternalKvPrefixResponse r =
                holdAndAsk("ssd", spec(1, 0, 6, 0, 0), q(1), report(TIER_SSD, q(1), masks(1), sizes(16, 1)));
        assertEquals(0, r.getBestPrefixBlocks());
        // Not even when the spec lists SSD for FULL: the indexer serves HBM and DRAM only.
        MatchExternalKvPrefixResponse listed =
                holdAndAsk("ssd-listed", spec(1, 0, 6 | 8, 0, 0), q(2), report(TIER_SSD, q(2), masks(1), sizes(16, 1)));
        assertEquals(0, listed.getBestPrefixBlocks());
    }

    @Test
    void slidingWindowRunsFromTheHeadOrOverTheWindow() throws Exception {
        WorkerCacheSpec swa = spec(3, 100, 2, 2, 0);
        MatchExternalKvPrefixResponse all = holdAndAsk(
                "all", swa, q(1, 2, 3, 4, 5), report(TIER_HBM, q(1, 2, 3, 4, 5), masks(3, 3, 3, 3, 3), sizes(50, 5)));
        assertEquals(5, prefixOf(all, "all"));
        // Block index 3 without SWA: the run restarts at index 4 with 50 tokens, short of the window of 100.
        MatchExternalKvPrefixResponse hole = holdAndAsk(
                "hole",
                swa,
                q(11, 12, 13, 14, 15),
                report(TIER_HBM, q(11, 12, 13, 14, 15), masks(3, 3, 3, 1, 3), sizes(50, 5)));
        assertEquals(3, prefixOf(hole, "hole"));
        // A window larger than the whole prompt is fine when the run reaches back to the head.
        MatchExternalKvPrefixResponse head = holdAndAsk(
                "head", spec(3, 1000, 6, 6, 0), q(21, 22), report(TIER_HBM, q(21, 22), masks(3, 3), sizes(16, 2)));
        assertEquals(2, prefixOf(head, "head"));
    }

    @Test
    void mambaMustBeOnTheLastBlock() throws Exception {
        WorkerCacheSpec mamba = spec(5, 0, 6, 0, 6);
        MatchExternalKvPrefixResponse four = holdAndAsk(
                "mamba", mamba, q(1, 2, 3, 4), report(TIER_HBM, q(1, 2, 3, 4), masks(1, 1, 1, 5), sizes(16, 4)));
        assertEquals(4, prefixOf(four, "mamba"));
        MatchExternalKvPrefixResponse two = g.prefix(1, 2);
        assertEquals(0, two.getBestPrefixBlocks());
        assertEquals(2, two.getBlocksRead());
    }

    @Test
    void unusableSpecsFailClosed() throws Exception {
        WorkerCacheSpec noComponents = spec(0, 0, 6, 6, 6);
        WorkerCacheSpec version2 =
                spec(3, 100, 6, 6, 0).toBuilder().setVersion(2).build();
        WorkerCacheSpec noWindow = spec(3, 0, 6, 6, 0);
        WorkerCacheSpec allZero = WorkerCacheSpec.getDefaultInstance();
        long h = 100;
        for (WorkerCacheSpec s : List.of(noComponents, version2, noWindow, allZero)) {
            h++;
            MatchExternalKvPrefixResponse r = holdAndAsk(
                    "w" + h, s, q(h, h + 1000), report(TIER_HBM, q(h, h + 1000), masks(3, 3), sizes(200, 2)));
            assertEquals(0, r.getBestPrefixBlocks(), s.toString());
            assertEquals(0, r.getMatchesCount(), s.toString());
            // The first block is held, so the query was considered in full.
            assertEquals(2, r.getBlocksRead(), s.toString());
        }
        // Version 0, the proto default, is taken as the current version.
        MatchExternalKvPrefixResponse v0 = holdAndAsk(
                "v0",
                spec(1, 0, 6, 0, 0).toBuilder().setVersion(0).build(),
                q(9),
                report(TIER_HBM, q(9), masks(1), sizes(16, 1)));
        assertEquals(1, v0.getBestPrefixBlocks());
    }

    @Test
    void aSlidingWindowSpecIgnoresLegacyBlocks() throws Exception {
        MatchExternalKvPrefixResponse r =
                holdAndAsk("legacy-blocks", spec(3, 100, 6, 6, 0), q(1, 2), report(TIER_HBM, 1, 2));
        assertEquals(0, r.getBestPrefixBlocks());
    }
}
