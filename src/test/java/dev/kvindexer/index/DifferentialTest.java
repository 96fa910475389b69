package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.event.WorkerRank;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random operations on a small hash alphabet, applied to PartitionIndex and to the naive ReferenceIndex;
 * every match must agree, and so must a dump round trip.
 */
class DifferentialTest {
    private static final long[] WORKERS = {0, 1, 2, -1L};
    /** 80 owners: holder sets past one 64-bit word. */
    private static final long[] MANY_WORKERS =
            java.util.stream.LongStream.range(0, 40).map(w -> w * 7919).toArray();

    private static final StorageTier[] TIERS = StorageTier.values();

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
    void agreesWithReferenceModel(long seed) {
        agrees(seed, WORKERS);
    }

    @ParameterizedTest
    @ValueSource(longs = {101, 102, 103, 104})
    void agreesWithReferenceModelPastSixtyFourOwners(long seed) {
        agrees(seed, MANY_WORKERS);
    }

    private static void agrees(long seed, long[] workers) {
        Random rnd = new Random(seed);
        PartitionIndex index = new PartitionIndex(4);
        ReferenceIndex ref = new ReferenceIndex();
        for (int step = 0; step < 3000; step++) {
            String what = applyRandomOp(rnd, index, ref, workers);
            for (int q = 0; q < 3; q++) {
                long[] query = randomQuery(rnd);
                assertSameMatches(
                        ref.match(query),
                        index.match(query),
                        "seed " + seed + " step " + step + " after " + what + " query "
                                + java.util.Arrays.toString(query));
            }
            assertEquals(ref.deviceBlockCount(), index.blockCount(), "block count, seed " + seed + " step " + step);
            for (StorageTier t : new StorageTier[] {StorageTier.HOST_PINNED, StorageTier.DISK, StorageTier.EXTERNAL}) {
                assertEquals(
                        ref.edgeCount(t), index.lowerTierEdgeCount(t), t + " edges, seed " + seed + " step " + step);
            }
            for (long w : workers) {
                for (int r = 0; r < 2; r++) {
                    for (StorageTier t : TIERS) {
                        assertEquals(
                                ref.held(new WorkerRank(w, r), t).size(),
                                index.heldBlocks(w, r, t),
                                "held " + w + ":" + r + " " + t + ", seed " + seed + " step " + step + " after "
                                        + what);
                    }
                }
            }
            if (step % 250 == 249) {
                PartitionIndex copy = DumpReplay.replay(index);
                for (int q = 0; q < 40; q++) {
                    long[] query = randomQuery(rnd);
                    assertSameMatches(ref.match(query), copy.match(query), "dump round trip, seed " + seed);
                }
                assertSameCopies(ref, index, copy, workers, "dump round trip, seed " + seed + " step " + step);
            }
        }
    }

    /** Every block the round trip carried keeps its reference count (detached blocks are not dumped). */
    private static void assertSameCopies(
            ReferenceIndex ref, PartitionIndex index, PartitionIndex copy, long[] workers, String context) {
        for (long w : workers) {
            for (int r = 0; r < 2; r++) {
                for (StorageTier t : TIERS) {
                    for (long h : ref.held(new WorkerRank(w, r), t)) {
                        int carried = copy.copies(w, r, t, h);
                        if (carried > 0) {
                            assertEquals(
                                    index.copies(w, r, t, h),
                                    carried,
                                    "copies of " + h + " " + w + ":" + r + " " + t + ", " + context);
                        }
                    }
                }
            }
        }
    }

    private static String applyRandomOp(Random rnd, PartitionIndex index, ReferenceIndex ref, long[] workers) {
        WorkerRank o = new WorkerRank(workers[rnd.nextInt(workers.length)], rnd.nextInt(2));
        int dice = rnd.nextInt(100);
        if (dice < 55) {
            StorageTier tier = rnd.nextInt(10) < 6 ? StorageTier.DEVICE : TIERS[1 + rnd.nextInt(3)];
            Long parent = null;
            int p = rnd.nextInt(10);
            if (p < 4) {
                StorageTier from = rnd.nextBoolean() ? StorageTier.DEVICE : tier;
                List<Long> held = ref.held(o, from);
                if (!held.isEmpty()) {
                    parent = held.get(rnd.nextInt(held.size()));
                }
            } else if (p == 4) {
                parent = (long) rnd.nextInt(12);
            }
            int n = 1 + rnd.nextInt(4);
            long[] hashes = new long[n];
            long[] locals = new long[n];
            long prev = parent == null ? 0 : parent;
            for (int i = 0; i < n; i++) {
                locals[i] = 1 + rnd.nextInt(4);
                // Mostly path-derived engine hashes (shared by owners), sometimes arbitrary small ones.
                hashes[i] = rnd.nextInt(6) == 0 ? rnd.nextInt(12) : prev * 5 + locals[i] + 100;
                prev = hashes[i];
            }
            StoreOutcome expected = ref.store(o, tier, parent, hashes, locals);
            StoreOutcome actual = index.store(
                    o.workerId(), o.dpRank(), tier, parent != null, parent == null ? 0 : parent, hashes, locals);
            assertEquals(expected, actual, "store outcome");
            return "store " + o + " " + tier + " parent " + parent + " " + java.util.Arrays.toString(hashes)
                    + " locals " + java.util.Arrays.toString(locals);
        } else if (dice < 85) {
            StorageTier tier = TIERS[rnd.nextInt(4)];
            List<Long> held = ref.held(o, tier);
            int n = 1 + rnd.nextInt(3);
            long[] hashes = new long[n];
            for (int i = 0; i < n; i++) {
                hashes[i] =
                        !held.isEmpty() && rnd.nextInt(5) > 0 ? held.get(rnd.nextInt(held.size())) : rnd.nextInt(12);
            }
            int before = ref.copies(o, tier, hashes[0]);
            IndexFixture.remove(index, ref, o, tier, hashes);
            assertEquals(
                    ref.copies(o, tier, hashes[0]),
                    index.copies(o.workerId(), o.dpRank(), tier, hashes[0]),
                    "copies (were " + before + ")");
            return "remove " + o + " " + tier + " " + java.util.Arrays.toString(hashes);
        } else if (dice < 93) {
            IndexFixture.clear(index, ref, o);
            return "clear " + o;
        } else if (dice < 97) {
            ref.clear(o);
            index.removeWorkerDpRank(o.workerId(), o.dpRank());
            return "removeWorkerDpRank " + o;
        } else {
            IndexFixture.removeWorker(index, ref, o.workerId());
            return "removeWorker " + o.workerId();
        }
    }

    private static long[] randomQuery(Random rnd) {
        long[] q = new long[1 + rnd.nextInt(6)];
        for (int i = 0; i < q.length; i++) {
            q[i] = 1 + rnd.nextInt(4);
        }
        return q;
    }

    private static void assertSameMatches(
            Map<WorkerRank, OwnerMatch> expected, List<OwnerMatch> actual, String context) {
        Map<WorkerRank, OwnerMatch> got = new HashMap<>();
        for (OwnerMatch m : actual) {
            assertTrue(m.gpuBlocks() <= m.cpuBlocks() && m.cpuBlocks() <= m.diskBlocks(), "gpu <= cpu <= disk " + m);
            assertTrue(m.diskBlocks() >= 1, "only owners with an entry " + m);
            got.put(new WorkerRank(m.workerId(), m.dpRank()), m);
        }
        assertEquals(actual.size(), got.size(), "one entry per owner: " + context);
        assertEquals(expected, got, context);
    }
}
