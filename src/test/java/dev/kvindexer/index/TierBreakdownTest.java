package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.kvindexer.event.StorageTier;
import java.util.List;
import org.junit.jupiter.api.Test;

/** T6 of docs/protocol/index.md#test-vectors and the worked example of docs/protocol/index.md#tier-semantics-compared
 * (cumulative row). */
class TierBreakdownTest {

    @Test
    void t6CumulativeMultiRankSummary() {
        TierBreakdown b = TierBreakdown.of(List.of(new OwnerMatch(7, 1, 1, 1, 2), new OwnerMatch(7, 0, 2, 3, 5)), 16);
        TierBreakdown.InstanceBreakdown i7 = b.instance(7);
        assertEquals(new TierBreakdown.InstanceBreakdown(7, 80, 32, new int[] {0, 1}, new long[] {32, 16}, 48, 80), i7);
        assertEquals(32, i7.dp(0));
        assertEquals(16, i7.dp(1));
        assertEquals(-1, i7.dp(2));
        assertEquals(List.of(new TierBreakdown.Score(7, 0, 32), new TierBreakdown.Score(7, 1, 16)), b.scores());
    }

    @Test
    void t6SameFiguresFromTheIndex() {
        PartitionIndex index = new PartitionIndex(16);
        // (7,0): device 2, host 1, disk 2; (7,1): device 1, disk 1.
        index.store(7, 0, StorageTier.DEVICE, false, 0, new long[] {101, 102}, new long[] {1, 2});
        index.store(7, 0, StorageTier.HOST_PINNED, true, 102, new long[] {103}, new long[] {3});
        index.store(7, 0, StorageTier.DISK, true, 103, new long[] {104, 105}, new long[] {4, 5});
        index.store(7, 1, StorageTier.DEVICE, false, 0, new long[] {201}, new long[] {1});
        index.store(7, 1, StorageTier.DISK, true, 201, new long[] {202}, new long[] {2});
        List<OwnerMatch> m = index.match(new long[] {1, 2, 3, 4, 5});
        assertEquals(List.of(new OwnerMatch(7, 0, 2, 3, 5), new OwnerMatch(7, 1, 1, 1, 2)), sorted(m));
        assertEquals(
                new TierBreakdown.InstanceBreakdown(7, 80, 32, new int[] {0, 1}, new long[] {32, 16}, 48, 80),
                TierBreakdown.of(m, 16).instance(7));
    }

    /**
     * A partition's answer says it is in order, so the breakdown takes its instances without checking: the figures must
     * be those of the same entries given with no such word (several ranks a worker, unsigned ids, a wide answer).
     */
    @Test
    void aPartitionsOrderedAnswerBreaksDownAsTheSameEntriesDo() {
        PartitionIndex index = new PartitionIndex(16);
        long[] workers = {-1L, 3, Long.MIN_VALUE, 9, 0};
        for (int i = 0; i < 200; i++) {
            // Three ranks of each worker.
            long worker = workers[i % workers.length] + (i / (3 * workers.length)) * 1_000L;
            int rank = i / workers.length % 3;
            int blocks = 1 + i % 4;
            long[] engine = new long[blocks];
            long[] local = new long[blocks];
            for (int b = 0; b < blocks; b++) {
                engine[b] = 10_000L * i + b;
                local[b] = b + 1;
            }
            index.store(worker, rank, StorageTier.DEVICE, false, 0, engine, local);
        }
        OwnerMatches ordered = index.matchOwners(new long[] {1, 2, 3, 4}, null);
        assertEquals(200, ordered.size());
        TierBreakdown fromPartition = TierBreakdown.of(ordered, 16);
        TierBreakdown fromEntries = TierBreakdown.of(ordered.toList(), 16);
        assertEquals(fromEntries.instances(), fromPartition.instances());
        assertEquals(fromEntries.scores(), fromPartition.scores());
        assertEquals(fromEntries.instanceCount(), fromPartition.instanceCount());
    }

    @Test
    void t6ExpectedZeroOverlapRank() {
        TierBreakdown b = TierBreakdown.of(List.of(new OwnerMatch(9, 3, 0, 0, 0)), 16);
        assertEquals(new TierBreakdown.InstanceBreakdown(9, 0, 0, new int[] {3}, new long[] {0}, 0, 0), b.instance(9));
        assertEquals(List.of(), b.scores());
    }

    @Test
    void instancesSortedByUnsignedWorkerId() {
        long big = Long.parseUnsignedLong("18446744073709551615");
        TierBreakdown b = TierBreakdown.of(
                List.of(new OwnerMatch(big, 0, 1, 1, 1), new OwnerMatch(5, 2, 1, 1, 1), new OwnerMatch(5, 0, 0, 1, 1)),
                4);
        assertEquals(5, b.instances().get(0).workerId());
        assertEquals(big, b.instances().get(1).workerId());
        assertEquals(
                new TierBreakdown.InstanceBreakdown(5, 4, 4, new int[] {0, 2}, new long[] {0, 4}, 4, 4), b.instance(5));
        assertNull(b.instance(6));
    }

    /**
     * The worked example (docs/protocol/index.md#tier-semantics-compared): block size 2, [H1,H2,H3]; H1 on GPU dp0+dp1,
     * CPU, DISK; H2 on GPU dp0 and CPU; H3 on DISK only.
     */
    @Test
    void workedExampleDynamoCumulativeRow() {
        for (boolean lowerOnBothRanks : new boolean[] {false, true}) {
            PartitionIndex index = new PartitionIndex(2);
            index.store(1, 0, StorageTier.DEVICE, false, 0, new long[] {100, 200}, new long[] {1, 2});
            index.store(1, 1, StorageTier.DEVICE, false, 0, new long[] {100}, new long[] {1});
            for (int rank = 0; rank <= (lowerOnBothRanks ? 1 : 0); rank++) {
                index.store(1, rank, StorageTier.HOST_PINNED, false, 0, new long[] {100, 200}, new long[] {1, 2});
                index.store(1, rank, StorageTier.DISK, false, 0, new long[] {100}, new long[] {1});
                index.store(1, rank, StorageTier.DISK, true, 200, new long[] {300}, new long[] {3});
            }
            List<OwnerMatch> m = index.match(new long[] {1, 2, 3});
            assertEquals(new OwnerMatch(1, 0, 2, 2, 3), sorted(m).get(0));
            assertEquals(
                    lowerOnBothRanks ? new OwnerMatch(1, 1, 1, 2, 3) : new OwnerMatch(1, 1, 1, 1, 1),
                    sorted(m).get(1));
            assertEquals(
                    new TierBreakdown.InstanceBreakdown(1, 6, 4, new int[] {0, 1}, new long[] {4, 2}, 4, 6),
                    TierBreakdown.of(m, 2).instance(1));
        }
    }

    /**
     * The columns against a plain model on shuffled owners: unsigned ids, duplicate (worker, rank) entries (merged,
     * each field its largest), ranks out of order, owners in any order and already in order.
     */
    @Test
    void columnsAgreeWithAPlainModel() {
        java.util.Random random = new java.util.Random(7);
        long[] workers = {3, 9, -1L, Long.MIN_VALUE, 0};
        for (int round = 0; round < 300; round++) {
            List<OwnerMatch> owners = new java.util.ArrayList<>();
            int n = random.nextInt(12);
            for (int i = 0; i < n; i++) {
                int g = random.nextInt(4);
                int c = g + random.nextInt(3);
                owners.add(new OwnerMatch(
                        workers[random.nextInt(workers.length)], random.nextInt(3), g, c, c + random.nextInt(3)));
            }
            if (round % 3 == 0) {
                owners = sorted(owners);
            }
            TierBreakdown b = TierBreakdown.of(owners, 16);
            List<OwnerMatch> in = sorted(owners); // stable: duplicates keep their input order
            List<TierBreakdown.Score> scores = new java.util.ArrayList<>();
            List<TierBreakdown.InstanceBreakdown> instances = new java.util.ArrayList<>();
            for (int i = 0; i < in.size(); ) {
                long w = in.get(i).workerId();
                java.util.TreeMap<Integer, Long> dp = new java.util.TreeMap<>();
                long gpu = 0, cpu = 0, disk = 0;
                for (; i < in.size() && in.get(i).workerId() == w; i++) {
                    OwnerMatch m = in.get(i);
                    dp.merge(m.dpRank(), m.gpuBlocks() * 16L, Math::max);
                    gpu = Math.max(gpu, m.gpuBlocks() * 16L);
                    cpu = Math.max(cpu, m.cpuBlocks() * 16L);
                    disk = Math.max(disk, m.diskBlocks() * 16L);
                }
                long worker = w;
                dp.forEach((rank, tokens) -> {
                    if (tokens > 0) {
                        scores.add(new TierBreakdown.Score(worker, rank, tokens));
                    }
                });
                instances.add(new TierBreakdown.InstanceBreakdown(
                        w,
                        Math.max(gpu, Math.max(cpu, disk)),
                        gpu,
                        dp.keySet().stream().mapToInt(Integer::intValue).toArray(),
                        dp.values().stream().mapToLong(Long::longValue).toArray(),
                        cpu,
                        disk));
            }
            assertEquals(instances, b.instances(), "round " + round + ": " + owners);
            assertEquals(scores, b.scores(), "round " + round + ": " + owners);
            assertEquals(instances.size(), b.instanceCount());
        }
    }

    static List<OwnerMatch> sorted(List<OwnerMatch> m) {
        return m.stream()
                .sorted((a, b) -> a.workerId() != b.workerId()
                        ? Long.compareUnsigned(a.workerId(), b.workerId())
                        : Integer.compare(a.dpRank(), b.dpRank()))
                .toList();
    }
}
