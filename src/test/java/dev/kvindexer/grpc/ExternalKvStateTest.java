package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.clear;
import static dev.kvindexer.grpc.GrpcFixture.held;
import static dev.kvindexer.grpc.GrpcFixture.prefixOf;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static dev.kvindexer.grpc.GrpcFixture.revoke;
import static dev.kvindexer.grpc.GrpcFixture.spec;
import static dev.kvindexer.grpc.v1.TierType.TIER_DRAM;
import static dev.kvindexer.grpc.v1.TierType.TIER_HBM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchResponse;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvNodeMatch;
import dev.kvindexer.grpc.v1.ExternalKvPrefixMatch;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.MatchExternalKvResponse;
import dev.kvindexer.grpc.v1.TierHashes;
import dev.kvindexer.grpc.v1.TierType;
import dev.kvindexer.grpc.v1.WorkerCacheSpec;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The placement state SGLang's indexer keeps, pinned by the examples of its memory_integration tests (placements per
 * worker and tier, hit counters, action order, prefix rules), driven over real gRPC with the generated client.
 */
class ExternalKvStateTest {
    private static GrpcFixture g;
    private static final AtomicLong NEXT_BASE = new AtomicLong();

    /** The FULL|SWA spec of SGLang's component examples: window 100, FULL from HBM or DRAM, SWA from HBM only. */
    private static final WorkerCacheSpec SWA_SPEC = spec(3, 100, 6, 2, 0);

    // One server for the class; each test has its own hashes and worker ids, so tests cannot see each other's state.
    private long base;
    private String prefix;

    @BeforeAll
    static void start() throws Exception {
        g = new GrpcFixture();
    }

    @AfterAll
    static void stop() throws Exception {
        g.close();
    }

    @BeforeEach
    void namespace(TestInfo info) {
        base = NEXT_BASE.addAndGet(1L << 24);
        prefix = info.getTestMethod().orElseThrow().getName();
    }

    /** This test's hash {@code n}. */
    private long h(long n) {
        return base + n;
    }

    private long[] h(long... ns) {
        return LongStream.of(ns).map(this::h).toArray();
    }

    /** This test's worker {@code name}. */
    private String w(String name) {
        return prefix + "/" + name;
    }

    private ApplyExternalKvBatchResponse apply(String worker, String address, ExternalKvAction... actions)
            throws Exception {
        return g.apply(batch(w(worker), address, 1, actions));
    }

    private ApplyExternalKvBatchResponse apply(
            String worker, String address, WorkerCacheSpec spec, ExternalKvAction... actions) throws Exception {
        return g.apply(batch(w(worker), address, 1, actions).toBuilder()
                .setCacheSpec(spec)
                .build());
    }

    private Map<Long, List<TierType>> heldBy(String worker, long... ns) throws Exception {
        return held(g.match(h(ns)), w(worker));
    }

    @Test
    void reportThenMatch() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1, 2)));
        MatchExternalKvResponse r = g.match(h(1, 2, 3));
        assertEquals(1, r.getMatchesCount());
        ExternalKvNodeMatch m = r.getMatches(0);
        assertEquals(w("w1"), m.getWorkerId());
        assertEquals("10.0.0.1:9000", m.getAddress());
        // Legacy placements still carry both side arrays, aligned with the hashes: mask 0, size 0 (unknown).
        assertEquals(
                List.of(TierHashes.newBuilder()
                        .setTier(TIER_HBM)
                        .addHashes(h(1))
                        .addHashes(h(2))
                        .addComponentMasks(0)
                        .addComponentMasks(0)
                        .addBlockSizes(0)
                        .addBlockSizes(0)
                        .build()),
                m.getHashesByTierList());
    }

    @Test
    void aLargeRequestComesBackInRequestOrder() throws Exception {
        long[] hashes = LongStream.range(0, 300).map(this::h).toArray();
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, hashes));
        MatchExternalKvResponse r = g.match(hashes);
        assertEquals(1, r.getMatchesCount());
        assertEquals(1, r.getMatches(0).getHashesByTierCount());
        assertEquals(
                GrpcFixture.longs(hashes), r.getMatches(0).getHashesByTier(0).getHashesList());
        // Request order, not storage order: the same hashes asked backwards come back backwards.
        long[] backwards = LongStream.range(0, 300).map(i -> h(299 - i)).toArray();
        assertEquals(
                GrpcFixture.longs(backwards),
                g.match(backwards).getMatches(0).getHashesByTier(0).getHashesList());
    }

    @Test
    void aDuplicateReportIsIdempotent() throws Exception {
        for (int i = 0; i < 3; i++) {
            apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        }
        assertEquals(Map.of(h(1), List.of(TIER_HBM)), heldBy("w1", 1));
    }

    @Test
    void anIdenticalBatchReplayedGivesTheSameState() throws Exception {
        ApplyExternalKvBatchRequest b = batch(
                w("w1"), "10.0.0.1:9000", 7, report(TIER_HBM, h(9)), revoke(TIER_HBM, h(9)), report(TIER_HBM, h(9)));
        for (int i = 0; i < 2; i++) {
            ApplyExternalKvBatchResponse a = g.apply(b);
            // Without enforce_sequence the seq is only echoed: a replay is applied again, not flagged duplicate.
            assertEquals(7, a.getAppliedSeq());
            assertFalse(a.getDuplicate());
            assertEquals(Map.of(h(9), List.of(TIER_HBM)), heldBy("w1", 9));
        }
    }

    @Test
    void storeRemoveStore() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        apply("w1", "10.0.0.1:9000", revoke(TIER_HBM, h(1)));
        assertEquals(0, g.match(h(1)).getMatchesCount());
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        assertEquals(Map.of(h(1), List.of(TIER_HBM)), heldBy("w1", 1));
    }

    @Test
    void aRecomputedSplitKeepsOnlyTheNewBlocks() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1, 2)));
        apply("w1", "10.0.0.1:9000", revoke(TIER_HBM, h(1, 2)));
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)), report(TIER_HBM, h(3)));
        assertEquals(Map.of(h(1), List.of(TIER_HBM), h(3), List.of(TIER_HBM)), heldBy("w1", 1, 2, 3));
    }

    @Test
    void aReportAtAnotherTierKeepsTheCpuCopy() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_DRAM, h(1)));
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        // Tiers come back ascending (HBM before DRAM), whatever order they were reported in.
        assertEquals(Map.of(h(1), List.of(TIER_HBM, TIER_DRAM)), heldBy("w1", 1));
        List<TierHashes> tiers = g.match(h(1)).getMatches(0).getHashesByTierList();
        assertEquals(
                List.of(TIER_HBM, TIER_DRAM),
                tiers.stream().map(TierHashes::getTier).toList());
    }

    @Test
    void aRevokeRemovesOnlyItsTier() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)), report(TIER_DRAM, h(1)), revoke(TIER_HBM, h(1)));
        assertEquals(Map.of(h(1), List.of(TIER_DRAM)), heldBy("w1", 1));
    }

    @Test
    void revokingWhatIsNotHeldIsANoOp() throws Exception {
        // Answered OK (a refusal would throw here): an unknown hash or placement is silently skipped.
        apply("w1", "10.0.0.1:9000", revoke(TIER_HBM, h(404)));
        assertEquals(0, g.match(h(404)).getMatchesCount());
    }

    @Test
    void workersHoldingTheSameBlockAreEachListed() throws Exception {
        apply("w1", "a1", report(TIER_HBM, h(1)));
        apply("w2", "a2", report(TIER_DRAM, h(1)));
        MatchExternalKvResponse r = g.match(h(1));
        assertEquals(2, r.getMatchesCount());
        assertEquals(Map.of(h(1), List.of(TIER_HBM)), held(r, w("w1")));
        assertEquals(Map.of(h(1), List.of(TIER_DRAM)), held(r, w("w2")));
        Map<String, String> addresses = Map.of(
                r.getMatches(0).getWorkerId(), r.getMatches(0).getAddress(),
                r.getMatches(1).getWorkerId(), r.getMatches(1).getAddress());
        assertEquals(Map.of(w("w1"), "a1", w("w2"), "a2"), addresses);
    }

    @Test
    void clearAllAtTierLeavesOtherTiers() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1, 2, 3)), report(TIER_DRAM, h(1)));
        // Another worker's HBM copy of 2 is not this worker's to clear.
        apply("other", "10.0.0.2:9000", report(TIER_HBM, h(2)));
        apply("w1", "10.0.0.1:9000", clear(TIER_HBM));
        assertEquals(Map.of(h(1), List.of(TIER_DRAM)), heldBy("w1", 1, 2, 3));
        assertEquals(Map.of(h(2), List.of(TIER_HBM)), heldBy("other", 1, 2, 3));
    }

    @Test
    void onlyACountingMatchCountsAndOnlyWhatItFound() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        g.match(h(1, 2));
        assertEquals(Map.of(), g.hits(h(1, 2)), "a match without count_as_hit counts nothing");
        g.countingMatch(h(1, 2));
        assertEquals(Map.of(h(1), 1L), g.hits(h(1, 2)), "a hash never found has no counter, not a 0");
        // A hash asked twice in one counting match counts once.
        g.countingMatch(h(1, 1));
        assertEquals(Map.of(h(1), 2L), g.hits(h(1)));
        // Reporting again is not a hit, and does not reset the counter.
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        assertEquals(Map.of(h(1), 2L), g.hits(h(1)));
    }

    @Test
    void aFullRevokeDropsTheCounter() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        g.countingMatch(h(1));
        assertEquals(Map.of(h(1), 1L), g.hits(h(1)));
        apply("w1", "10.0.0.1:9000", revoke(TIER_HBM, h(1)));
        assertEquals(0, g.match(h(1)).getMatchesCount());
        assertEquals(Map.of(), g.hits(h(1)));
        // The block comes back without its old count.
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        assertEquals(Map.of(), g.hits(h(1)));
    }

    @Test
    void aPartialRevokeKeepsTheCounter() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)), report(TIER_DRAM, h(1)));
        g.countingMatch(h(1));
        apply("w1", "10.0.0.1:9000", revoke(TIER_HBM, h(1)));
        assertEquals(Map.of(h(1), 1L), g.hits(h(1)));
    }

    @Test
    void actionsRunInTheirOrder() throws Exception {
        apply("w1", "10.0.0.1:9000", revoke(TIER_HBM, h(5)), report(TIER_HBM, h(5)));
        assertEquals(Map.of(h(5), List.of(TIER_HBM)), heldBy("w1", 5));
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(6)), revoke(TIER_HBM, h(6)));
        assertEquals(0, g.match(h(6)).getMatchesCount());
    }

    @Test
    void prefixPerWorkerLongestFirstWithoutUnaddressedWorkers() throws Exception {
        apply("w-long", "10.0.0.1:1", report(TIER_HBM, h(1, 2, 3, 4)));
        apply("w-short", "10.0.0.2:1", report(TIER_HBM, h(1, 2)));
        apply("w-hole", "10.0.0.3:1", report(TIER_HBM, h(1, 3, 4)));
        apply("w-noaddr", "", report(TIER_HBM, h(1, 2)));
        MatchExternalKvPrefixResponse r = g.prefix(h(1, 2, 3, 4));
        assertEquals(4, r.getBestPrefixBlocks());
        assertEquals(4, r.getMatches(0).getMatchedPrefixBlocks());
        assertEquals(4, r.getBlocksRead(), "blocks_read is the number of blocks considered");
        assertEquals(
                List.of(w("w-hole") + "=1", w("w-long") + "=4", w("w-short") + "=2"),
                r.getMatchesList().stream()
                        .map(m -> m.getWorkerId() + "=" + m.getMatchedPrefixBlocks())
                        .sorted()
                        .toList());
        List<Integer> lengths = r.getMatchesList().stream()
                .map(ExternalKvPrefixMatch::getMatchedPrefixBlocks)
                .toList();
        assertEquals(lengths.stream().sorted(Comparator.reverseOrder()).toList(), lengths, "longest first");
        assertEquals("10.0.0.1:1", r.getMatches(0).getWorkerAddress());
        // Only prefix answers leave out a worker without an address; MatchExternalKv lists it, address "".
        List<ExternalKvNodeMatch> all = g.match(h(1)).getMatchesList();
        assertTrue(all.stream()
                .anyMatch(m ->
                        m.getWorkerId().equals(w("w-noaddr")) && m.getAddress().isEmpty()));
    }

    @Test
    void aFirstBlockMissReadsOneBlock() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(2, 3)));
        MatchExternalKvPrefixResponse r = g.prefix(h(1, 2, 3));
        assertEquals(0, r.getMatchesCount());
        assertEquals(0, r.getBestPrefixBlocks());
        assertEquals(1, r.getBlocksRead());
    }

    @Test
    void maxBlocksBoundsTheScan() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1, 2, 3, 4)));
        MatchExternalKvPrefixResponse r = g.prefixUpTo(2, h(1, 2, 3, 4));
        assertEquals(2, r.getBestPrefixBlocks());
        assertEquals(2, r.getBlocksRead());
        assertEquals(1, r.getMatchesCount());
        assertEquals(2, r.getMatches(0).getMatchedPrefixBlocks());
        // A max_blocks past the query is the query's length.
        assertEquals(4, g.prefixUpTo(10, h(1, 2, 3, 4)).getBlocksRead());
    }

    @Test
    void blocksReadCountsEveryConsideredBlockEvenWhenAllWorkersStoppedEarly() throws Exception {
        // A FULL-only worker that has blocks 1 and 2: its scan settles at block 3, but SGLang's answer still
        // reports the whole considered query (assemble_prefix_response(entries, limit)).
        apply("w1", "10.0.0.1:9000", spec(1, 0, 6, 0, 0), report(TIER_HBM, h(1, 2), new int[] {1, 1}, new int[] {16, 16
        }));
        MatchExternalKvPrefixResponse r = g.prefix(h(1, 2, 3, 4, 5));
        assertEquals(2, r.getBestPrefixBlocks());
        assertEquals(5, r.getBlocksRead());
    }

    @Test
    void componentPrefixNeedsTheSlidingWindow() throws Exception {
        apply("w-swa", "10.0.0.1:9000", SWA_SPEC, report(TIER_HBM, h(1, 2, 3, 4), new int[] {3, 3, 3, 1}, new int[] {
            50, 50, 50, 50
        }));
        MatchExternalKvPrefixResponse r = g.prefix(h(1, 2, 3, 4));
        assertEquals(3, prefixOf(r, w("w-swa")));
        assertEquals(3, r.getBestPrefixBlocks());
    }

    @Test
    void aPartialEvictionShortensThePrefix() throws Exception {
        apply("w1", "10.0.0.1:9000", SWA_SPEC, report(TIER_HBM, h(1, 2), new int[] {3, 3}, new int[] {80, 80}));
        assertEquals(2, g.prefix(h(1, 2)).getBestPrefixBlocks());
        // Block 2 loses its SWA part: a re-report replaces the mask of that (worker, tier) placement.
        apply("w1", "10.0.0.1:9000", SWA_SPEC, report(TIER_HBM, new long[] {h(2)}, new int[] {1}, new int[] {80}));
        assertEquals(1, g.prefix(h(1, 2)).getBestPrefixBlocks());
        MatchExternalKvResponse m = g.match(h(1, 2));
        assertEquals(
                TierHashes.newBuilder()
                        .setTier(TIER_HBM)
                        .addHashes(h(1))
                        .addHashes(h(2))
                        .addComponentMasks(3)
                        .addComponentMasks(1)
                        .addBlockSizes(80)
                        .addBlockSizes(80)
                        .build(),
                m.getMatches(0).getHashesByTier(0));
    }

    @Test
    void componentDetailWithoutASpecServesNoPrefix() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1, 2), new int[] {1, 1}, new int[] {16, 16}));
        MatchExternalKvPrefixResponse r = g.prefix(h(1, 2));
        assertEquals(0, r.getMatchesCount());
        assertEquals(0, r.getBestPrefixBlocks());
    }

    @Test
    void theLastOccurrenceOfAHashInOneReportWins() throws Exception {
        apply("w1", "10.0.0.1:9000", SWA_SPEC, report(TIER_HBM, h(1, 1), new int[] {3, 1}, new int[] {80, 80}));
        // Mask 1 (FULL only) wins, and the spec needs SWA: no prefix.
        assertEquals(0, g.prefix(h(1)).getBestPrefixBlocks());
        TierHashes t = g.match(h(1)).getMatches(0).getHashesByTier(0);
        assertEquals(List.of(h(1)), t.getHashesList(), "one placement, not two");
        assertEquals(List.of(1), t.getComponentMasksList());
    }

    @Test
    void aBatchWithoutASpecClearsTheStoredSpec() throws Exception {
        apply("w1", "10.0.0.1:9000", SWA_SPEC, report(TIER_HBM, new long[] {h(1)}, new int[] {3}, new int[] {200}));
        assertEquals(1, g.prefix(h(1)).getBestPrefixBlocks());
        // The worker is back in legacy mode, and its component placement of 1 makes it fail closed.
        apply("w1", "10.0.0.1:9000", report(TIER_DRAM, h(2)));
        MatchExternalKvPrefixResponse r = g.prefix(h(1));
        assertEquals(0, r.getMatchesCount());
        assertEquals(0, r.getBestPrefixBlocks());
    }

    @Test
    void everyBatchRefreshesTheAddress() throws Exception {
        apply("w1", "10.0.0.1:9000", report(TIER_HBM, h(1)));
        apply("w1", "10.0.0.9:9000", report(TIER_HBM, h(2)));
        assertEquals("10.0.0.9:9000", g.prefix(h(1)).getMatches(0).getWorkerAddress());
        // An empty address makes the worker unroutable for prefix answers but keeps its blocks.
        apply("w1", "");
        assertEquals(0, g.prefix(h(1)).getMatchesCount());
        assertEquals(Map.of(h(1), List.of(TIER_HBM)), heldBy("w1", 1));
    }
}
