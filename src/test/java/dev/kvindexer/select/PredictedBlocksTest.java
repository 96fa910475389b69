package dev.kvindexer.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.event.PartitionKey;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The predicted entries' side index on a clock the test moves: prefixes, expiry, renewal, bounds, departures. */
class PredictedBlocksTest {
    private static final PartitionKey P = new PartitionKey("model", "default");
    private static final PartitionKey OTHER = new PartitionKey("other", "default");
    private final AtomicLong now = new AtomicLong(1_000);
    private final PredictedBlocks blocks = new PredictedBlocks(now::get, 100, 1_000);

    @Test
    void aRankIsPredictedAlongThePrefixItWasBookedFor() {
        blocks.record(P, 1, 0, new long[] {11, 12, 13, 14});
        blocks.record(P, 2, 3, new long[] {11, 12});
        assertEquals("1/0:4 2/3:2", depths(P, 11, 12, 13, 14, 15));
        assertEquals("1/0:2 2/3:2", depths(P, 11, 12, 99, 14), "a prompt that leaves the prefix at block 2");
        assertEquals("", depths(P, 12, 13, 14), "the same blocks elsewhere than from the first are another prefix");
        assertEquals("", depths(OTHER, 11, 12), "each partition has its own");
        assertEquals(6, blocks.entries());
    }

    @Test
    void aPredictionEndsAfterItsTtlUnlessABookingRenewedIt() {
        blocks.record(P, 1, 0, new long[] {11, 12, 13});
        now.addAndGet(60);
        blocks.record(P, 1, 0, new long[] {11, 12});
        now.addAndGet(40);
        List<PredictedBlocks.Prediction> ended = blocks.expire();
        assertEquals("1/0:2", depths(P, 11, 12, 13), "block 3's prediction ended; blocks 1 and 2 were booked again");
        assertEquals(1, ended.size());
        assertEquals(3, ended.get(0).blockHashes().length);
        assertEquals(2, blocks.entries(), "the renewing booking's blocks stay");
        now.addAndGet(59);
        assertEquals(List.of(), blocks.expire(), "the renewal has a millisecond left");
        now.addAndGet(1);
        assertEquals(1, blocks.expire().size());
        assertEquals("", depths(P, 11, 12));
        assertEquals(0, blocks.entries());
    }

    @Test
    void whenFullTheOldestPredictionsEndFirst() {
        PredictedBlocks small = new PredictedBlocks(now::get, 100, 4);
        small.record(P, 1, 0, new long[] {1, 2, 3});
        small.record(P, 2, 0, new long[] {7, 8});
        assertEquals(2, small.entries(), "worker 1's prediction went to make room");
        assertEquals(1, small.evictedEarly());
        assertEquals(List.of(), small.depths(P, new long[] {1, 2, 3}));
        assertEquals(List.of(new PredictedBlocks.Depth(2, 0, 2)), small.depths(P, new long[] {7, 8}));
        assertEquals(List.of(), small.expire(), "an evicted prediction does not end again");
    }

    @Test
    void aWorkerThatLeavesTakesItsPredictionsAlong() {
        blocks.record(P, 1, 0, new long[] {11, 12});
        blocks.record(P, 1, 1, new long[] {11, 12});
        blocks.record(P, 2, 0, new long[] {11});
        blocks.forget(P, 1, 1);
        assertEquals("1/0:2 2/0:1", depths(P, 11, 12));
        blocks.forget(P, 1, -1);
        assertEquals("2/0:1", depths(P, 11, 12));
        assertEquals(1, blocks.entries());
        now.addAndGet(100);
        assertEquals(1, blocks.expire().size(), "the forgotten predictions do not end again");
        assertEquals(0, blocks.entries());
    }

    @Test
    void aPromptWithoutBlocksRecordsNothing() {
        blocks.record(P, 1, 0, new long[0]);
        assertEquals(0, blocks.entries());
        assertEquals(List.of(), blocks.expire());
    }

    @Test
    void theTtlAndBoundArePositive() {
        assertThrows(IllegalArgumentException.class, () -> new PredictedBlocks(now::get, 0, 10));
        assertThrows(IllegalArgumentException.class, () -> new PredictedBlocks(now::get, 10, 0));
    }

    @Test
    void theEnvironmentTurnsThemOnOnlyBesideKvEvents() {
        assertEquals(0, SelectionConfig.fromEnvironment(Map.of()).predictedTtlMillis());
        assertEquals(
                2_500,
                SelectionConfig.fromEnvironment(Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "2.5"))
                        .predictedTtlMillis());
        Map<Map<String, String>, String> refused = Map.of(
                Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "5", "DYN_ROUTER_USE_KV_EVENTS", "false"),
                "router_predicted_ttl_secs requires use_kv_events=true; do not combine a primary approximate "
                        + "indexer with a side approximate indexer",
                Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "0"),
                "router_predicted_ttl_secs must be > 0",
                Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "-1"),
                "router_predicted_ttl_secs must be > 0",
                Map.of("DYN_ROUTER_APPROXIMATE_CACHE_POLICY", "lru"),
                "router_approximate_cache_policy=lru requires use_kv_events=false; the local side indexer is TTL-only",
                Map.of("DYN_ROUTER_APPROXIMATE_CACHE_POLICY", "fifo"),
                "router_approximate_cache_policy must be ttl or lru, not `fifo`");
        refused.forEach((env, message) -> assertEquals(
                "invalid KV router configuration: " + message,
                assertThrows(IllegalArgumentException.class, () -> SelectionConfig.fromEnvironment(env))
                        .getMessage(),
                env.toString()));
        SelectionConfig approximate = SelectionConfig.fromEnvironment(
                Map.of("DYN_ROUTER_APPROXIMATE_CACHE_POLICY", "LRU", "DYN_ROUTER_USE_KV_EVENTS", "false"));
        assertEquals(120_000, approximate.approximateTtlMillis(), "with events off lru keeps the TTL retention");
    }

    /** "worker/rank:blocks ..." sorted, for the prompt of these local hashes. */
    private String depths(PartitionKey p, long... hashes) {
        Map<String, Integer> sorted = new TreeMap<>();
        for (PredictedBlocks.Depth d : blocks.depths(p, hashes)) {
            sorted.put(d.workerId() + "/" + d.dpRank(), d.blocks());
        }
        StringBuilder out = new StringBuilder();
        sorted.forEach((k, v) ->
                out.append(out.length() == 0 ? "" : " ").append(k).append(':').append(v));
        return out.toString();
    }
}
