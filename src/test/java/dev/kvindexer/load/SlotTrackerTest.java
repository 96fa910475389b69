package dev.kvindexer.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.web.HttpError;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The slot tracker core (docs/api/slot-tracker.md#accounting): its accounting, the seed's worked example, refusals and stale cleanup. */
class SlotTrackerTest {
    private static final PartitionKey LLAMA = new PartitionKey("llama-3-8b", null);
    private long now = 1_000;
    private final SlotTracker tracker = new SlotTracker(() -> now, 300_000);

    private static TrackerViews.RankLoad load(long worker, long rank, long prefill, int blocks) {
        return new TrackerViews.RankLoad("llama-3-8b", "default", worker, rank, prefill, blocks);
    }

    private static int status(Runnable op) {
        return HttpError.status(assertThrows(Refusal.class, op::run).kind());
    }

    /** Dynamo's own potential-loads case: active [1,2,3] with 8 tokens, a request of [1,2,4] with 5 tokens. */
    @Test
    void dynamosPotentialLoadsCase() {
        tracker.register(LLAMA, 1, 16, 0, 1);
        tracker.add(LLAMA, "r", 1, 0, new long[] {1, 2, 3}, 8);
        assertEquals(
                List.of(new TrackerViews.PotentialLoad(1, 0, 13, 4, 1)),
                tracker.potentialLoads(LLAMA, new long[] {1, 2, 4}, 5));
    }

    @Test
    void theSeedsWorkedExample() {
        tracker.register(LLAMA, 7, 16, 0, 2);
        tracker.add(LLAMA, "req-123", 7, 0, new long[] {101, -22, 303}, 48);
        assertEquals(List.of(load(7, 0, 48, 3), load(7, 1, 0, 0)), tracker.loads(null, null));
        assertEquals(
                List.of(new TrackerViews.PotentialLoad(7, 0, 96, 4, 1), new TrackerViews.PotentialLoad(7, 1, 48, 4, 0)),
                tracker.potentialLoads(LLAMA, new long[] {101, -22, 303, 404}, 48));
        tracker.prefillComplete(LLAMA, "req-123");
        tracker.prefillComplete(LLAMA, "req-123");
        assertEquals(load(7, 0, 0, 3), tracker.loads(null, null).get(0), "prefill done once, repeat is a no-op");
        tracker.free(LLAMA, "req-123");
        assertEquals(load(7, 0, 0, 0), tracker.loads(null, null).get(0));
        tracker.free(LLAMA, "req-123");
        tracker.free(LLAMA, "never-added");
        assertEquals(0, tracker.activeRequests());
    }

    @Test
    void blocksSharedByRequestsOfARankCountOnceAndStayUntilTheLastGoes() {
        tracker.register(LLAMA, 7, 16, 0, 2);
        tracker.add(LLAMA, "a", 7, 0, new long[] {1, 2, 3}, 10);
        tracker.add(LLAMA, "b", 7, 0, new long[] {1, 2, 4}, 20);
        tracker.add(LLAMA, "c", 7, 1, new long[] {1, 2}, 5);
        assertEquals(
                List.of(load(7, 0, 30, 4), load(7, 1, 5, 2)),
                tracker.loads("llama-3-8b", "default"),
                "ranks never share blocks");
        tracker.free(LLAMA, "a");
        assertEquals(load(7, 0, 20, 3), tracker.loads(null, null).get(0), "1 and 2 are still b's");
        assertEquals(
                List.of(new TrackerViews.PotentialLoad(7, 0, 20, 3, 1), new TrackerViews.PotentialLoad(7, 1, 5, 3, 1)),
                tracker.potentialLoads(LLAMA, new long[] {1, 1, 4}, 0),
                "a repeated hash is one block");
        tracker.add(LLAMA, "empty", 7, 0, new long[0], 0);
        assertEquals(3, tracker.activeRequests());
    }

    @Test
    void topologyRulesAndTheirStatuses() {
        assertEquals(400, status(() -> tracker.register(LLAMA, 7, 0, 0, 1)));
        assertEquals(400, status(() -> tracker.register(LLAMA, 7, 16, 0, 0)));
        assertEquals(400, status(() -> tracker.register(LLAMA, 7, 16, 0xFFFF_FFFFL, 2)), "dp range overflows u32");
        assertEquals(400, status(() -> tracker.register(LLAMA, 7, 16, 0, SlotTracker.MAX_DP_SIZE + 1)));
        // Dynamo's u32 checked_add: the sum must fit too, so the highest rank is 2^32 - 2.
        assertEquals(400, status(() -> tracker.register(LLAMA, 7, 16, 0xFFFF_FFFEL, 2)), "start + size = 2^32");
        tracker.register(LLAMA, 7, 16, 0xFFFF_FFFDL, 2);
        assertEquals(409, status(() -> tracker.register(LLAMA, 8, 32, 0, 1)), "one block size per tracker");
        assertEquals(409, status(() -> tracker.register(LLAMA, 7, 16, 0, 1)), "already registered");
        tracker.register(new PartitionKey("llama-3-8b", "other"), 7, 32, 0, 1);
        tracker.register(new PartitionKey("a-model", null), -1, 8, 0, 1);
        tracker.register(LLAMA, 3, 16, 4, 1);
        assertEquals(
                List.of(
                        "a-model/default/18446744073709551615",
                        "llama-3-8b/default/3",
                        "llama-3-8b/default/7",
                        "llama-3-8b/other/7"),
                tracker.workers(null, null).stream()
                        .map(w -> w.modelName() + "/" + w.routingGroup() + "/" + Long.toUnsignedString(w.workerId()))
                        .toList(),
                "sorted by model, routing group, worker id (unsigned)");
        assertEquals(
                2,
                tracker.workers(null, "other").size()
                        + tracker.workers("a-model", null).size());
        assertEquals(4, tracker.trackedWorkers());

        assertEquals(404, status(() -> tracker.unregister(LLAMA, 99)));
        assertEquals(404, status(() -> tracker.unregister(new PartitionKey("nope", null), 7)));
        tracker.add(LLAMA, "r", 7, 0xFFFF_FFFEL, new long[] {5}, 1);
        tracker.unregister(LLAMA, 7);
        assertEquals(0, tracker.activeRequests(), "its requests went with it");
        assertEquals(3, tracker.trackedWorkers());
    }

    @Test
    void reshapingKeepsTheRanksInBothRangesAndDropsTheOthersWithTheirRequests() {
        tracker.register(LLAMA, 7, 16, 0, 3);
        tracker.add(LLAMA, "on-0", 7, 0, new long[] {1, 2}, 10);
        tracker.add(LLAMA, "on-2", 7, 2, new long[] {1, 3}, 20);
        assertEquals(List.of("on-0"), tracker.reshape(LLAMA, 7, 1, 3));
        assertEquals(
                List.of(load(7, 1, 0, 0), load(7, 2, 20, 2), load(7, 3, 0, 0)),
                tracker.loads(null, null),
                "rank 2 kept its request; rank 0 went with its own");
        assertEquals(1, tracker.activeRequests());
        tracker.register(LLAMA, 8, 16, 0, 1);
        SlotTracker.ActiveLoads active = tracker.activeLoads(LLAMA, new long[] {1, 3});
        assertEquals(2, active.of(7, 2).activeDepth());
        assertEquals(0, active.of(8, 0).activeDepth(), "rank 0's slot is taken again, without its blocks");
        assertNull(active.of(9, 2), "an unregistered worker, read after a registered one");
        assertEquals(2, active.of(7, 2).activeDepth(), "worker 7 again, after others were read");
        assertNull(active.of(7, 0), "a rank worker 7 no longer has");
        tracker.free(LLAMA, "on-2");
        assertEquals(load(7, 2, 0, 0), tracker.loads(null, null).get(1));
        assertEquals(404, status(() -> tracker.add(LLAMA, "late", 7, 0, new long[0], 1)), "rank 0 is gone");
        assertEquals(400, status(() -> tracker.reshape(LLAMA, 7, 0, 0)));
        assertEquals(404, status(() -> tracker.reshape(LLAMA, 9, 0, 1)));
    }

    @Test
    void lifecycleRefusalsChangeNothing() {
        tracker.register(LLAMA, 7, 16, 2, 2);
        tracker.add(LLAMA, "r", 7, 2, new long[] {1}, 8);
        assertEquals(404, status(() -> tracker.add(new PartitionKey("nope", null), "x", 7, 2, new long[0], 0)));
        assertEquals(404, status(() -> tracker.add(LLAMA, "x", 8, 2, new long[0], 0)), "unknown worker");
        assertEquals(404, status(() -> tracker.add(LLAMA, "x", 7, 1, new long[0], 0)), "rank below the range");
        assertEquals(404, status(() -> tracker.add(LLAMA, "x", 7, 4, new long[0], 0)), "rank past the range");
        assertEquals(409, status(() -> tracker.add(LLAMA, "r", 7, 3, new long[] {9}, 100)), "duplicate request id");
        assertEquals(404, status(() -> tracker.prefillComplete(LLAMA, "x")));
        assertEquals(404, status(() -> tracker.free(new PartitionKey("llama-3-8b", "t2"), "r")));
        assertEquals(404, status(() -> tracker.potentialLoads(new PartitionKey("nope", null), new long[0], 0)));
        assertEquals(List.of(load(7, 2, 8, 1), load(7, 3, 0, 0)), tracker.loads(null, null));
        assertEquals(1, tracker.activeRequests());
    }

    @Test
    void requestsOlderThanTheTtlAreCleanedUpOldestFirst() {
        tracker.register(LLAMA, 7, 16, 0, 1);
        tracker.add(LLAMA, "old", 7, 0, new long[] {1, 2}, 10);
        now += 200_000;
        tracker.add(LLAMA, "young", 7, 0, new long[] {2, 3}, 20);
        now += 99_999;
        assertEquals(0, tracker.expireStale(), "old is 299.999 s old");
        now += 1;
        assertEquals(1, tracker.expireStale());
        assertEquals(List.of(load(7, 0, 20, 2)), tracker.loads(null, null), "only young's tokens and blocks remain");
        assertEquals(404, status(() -> tracker.prefillComplete(LLAMA, "old")), "an expired request is gone");
        now += 200_000;
        assertEquals(1, tracker.expireStale());
        assertEquals(List.of(load(7, 0, 0, 0)), tracker.loads(null, null));
        assertTrue(tracker.activeRequests() == 0);
    }

    /**
     * The prompt's active depth on every rank, found through the hashes' holders, is exactly the number of its leading
     * hashes each rank holds, found by looking them up one by one, through random adds, frees, expiries, a worker
     * leaving and coming back, and hashes that are no chain (repeated, shared out of order): whatever clients send.
     */
    @Test
    void activeDepthsOfAllRanksAtOnceEqualEachRanksLeadingHashes() {
        activeDepthsMatchLookups(4, 5);
        // Over 64 ranks a shared hash's holders take more than one word.
        activeDepthsMatchLookups(40, 6);
    }

    private void activeDepthsMatchLookups(int ranks, long seed) {
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        SlotTracker t = new SlotTracker(() -> now, 300_000);
        java.util.Map<String, long[]> added = new java.util.HashMap<>();
        java.util.Map<String, long[]> placed = new java.util.HashMap<>();
        long[] workers = {3, 9, -1};
        for (long w : workers) {
            t.register(LLAMA, w, 16, 0, ranks);
        }
        for (int step = 0; step < 2000; step++) {
            int op = random.nextInt(10);
            if (op < 5) {
                String id = "r" + step;
                long[] hashes = random.longs(random.nextInt(12), 0, 24).toArray();
                long w = workers[random.nextInt(workers.length)];
                long rank = random.nextInt(ranks);
                t.add(LLAMA, id, w, rank, hashes, 1);
                added.put(id, hashes);
                placed.put(id, new long[] {w, rank});
            } else if (op < 8 && !added.isEmpty()) {
                String id = added.keySet().iterator().next();
                t.free(LLAMA, id);
                added.remove(id);
            } else if (op == 8) {
                long w = workers[random.nextInt(workers.length)];
                t.unregister(LLAMA, w);
                placed.forEach((id, at) -> {
                    if (at[0] == w) {
                        added.remove(id);
                    }
                });
                t.register(LLAMA, w, 16, 0, ranks);
            } else {
                now += 100_000;
                t.expireStale(added::remove);
            }
            long[] prompt = random.longs(1 + random.nextInt(10), 0, 24).toArray();
            SlotTracker.ActiveLoads loads = t.activeLoads(LLAMA, prompt);
            java.util.Map<String, Integer> potential = new java.util.HashMap<>();
            for (TrackerViews.PotentialLoad l : t.potentialLoads(LLAMA, prompt, 0)) {
                potential.put(l.workerId() + "/" + l.dpRank(), l.potentialDecodeBlocks());
            }
            for (long w : workers) {
                for (long rank = 0; rank < ranks; rank++) {
                    java.util.Set<Long> held = new java.util.HashSet<>();
                    for (java.util.Map.Entry<String, long[]> e : added.entrySet()) {
                        long[] at = placed.get(e.getKey());
                        if (at[0] == w && at[1] == rank) {
                            for (long h : e.getValue()) {
                                held.add(h);
                            }
                        }
                    }
                    int depth = 0;
                    while (depth < prompt.length && held.contains(prompt[depth])) {
                        depth++;
                    }
                    assertEquals(depth, loads.of(w, rank).activeDepth(), "step " + step + " worker " + w);
                    assertEquals(held.size(), t.activeLoad(LLAMA, w, rank).decodeBlocks(), "step " + step);
                    java.util.Set<Long> union = new java.util.HashSet<>(held);
                    for (long h : prompt) {
                        union.add(h);
                    }
                    assertEquals(union.size(), potential.get(w + "/" + rank), "potential blocks, step " + step);
                }
            }
        }
    }
}
