package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The memory budget's side of the index: accounting, and eviction of least recently used leaf chains. */
class EvictionTest {
    private static final int BLOCKS = 8;

    @Test
    void aFloodOfDistinctBlocksStaysWithinTheBudgetAndKeepsWhatIsQueried() {
        PartitionIndex index = new PartitionIndex(16);
        SplittableRandom rnd = new SplittableRandom(5);
        long[][] hot = new long[10][];
        for (int i = 0; i < hot.length; i++) {
            hot[i] = chain(rnd);
            storeChain(index, i % 4, hot[i]);
        }
        long budget = 2_000_000;
        long evicted = 0;
        for (int round = 0; round < 200; round++) {
            for (int c = 0; c < 500; c++) {
                storeChain(index, rnd.nextInt(4), chain(rnd));
            }
            for (long[] prompt : hot) {
                index.match(prompt); // a query keeps its chain recent
            }
            evicted += index.evictTo(budget);
            assertTrue(index.memoryBytes() <= budget, "round " + round + ": " + index.memoryBytes() + " bytes");
        }
        assertTrue(evicted > 500_000, "the flood was evicted: " + evicted);
        assertEquals(evicted, index.evictedBlocks());
        for (int i = 0; i < hot.length; i++) {
            List<OwnerMatch> m = index.match(hot[i]);
            assertEquals(1, m.size());
            assertEquals(BLOCKS, m.get(0).gpuBlocks(), "queried chain " + i + " kept whole");
        }
    }

    @Test
    void evictionOnlyTurnsHitsIntoMissesAndARemoveOfAnEvictedBlockIsANoOp() {
        PartitionIndex index = new PartitionIndex(16);
        SplittableRandom rnd = new SplittableRandom(9);
        long[][] prompts = new long[300][];
        Map<String, Integer> before = new HashMap<>();
        for (int i = 0; i < prompts.length; i++) {
            // Half the prompts share a first block, so eviction meets branches as well as chains.
            prompts[i] = chain(rnd);
            if (i % 2 == 0) {
                prompts[i][0] = 42;
            }
            storeChain(index, i % 3, prompts[i]);
            storeChain(index, 7, prompts[i]); // a second holder of every block
        }
        for (int i = 0; i < prompts.length; i++) {
            for (OwnerMatch m : index.match(prompts[i])) {
                before.put(i + "/" + m.workerId(), m.gpuBlocks());
            }
        }
        long blocks = index.blockCount();
        long evicted = index.evictTo(index.memoryBytes() / 2);
        assertTrue(evicted > 0);
        assertEquals(blocks - evicted, index.blockCount());
        for (int i = 0; i < prompts.length; i++) {
            for (OwnerMatch m : index.match(prompts[i])) {
                Integer was = before.get(i + "/" + m.workerId());
                assertTrue(was != null && m.gpuBlocks() <= was, "prompt " + i + " " + m + " was " + was);
                assertEquals(
                        m.gpuBlocks(),
                        index.match(prompts[i]).stream()
                                .filter(x -> x.workerId() == 7)
                                .findFirst()
                                .orElseThrow()
                                .gpuBlocks(),
                        "both holders of a block lose it together");
            }
        }
        // Every evicted block is gone for each holder: removing one is counted as missing and changes nothing.
        int missing = 0;
        for (long[] prompt : prompts) {
            long[] engines = BlockHasher.sequenceHashes(prompt);
            long last = engines[engines.length - 1];
            if (index.copies(7, 0, StorageTier.DEVICE, last) == 0) {
                missing += index.remove(7, 0, StorageTier.DEVICE, new long[] {last});
            }
        }
        assertTrue(missing > 0, "some chains lost their last block");
        assertEquals(blocks - evicted, index.blockCount());
        PartitionIndex copy = DumpReplay.replay(index);
        for (long[] prompt : prompts) {
            assertEquals(scores(index.match(prompt)), scores(copy.match(prompt)), "a dump after eviction replays");
        }
    }

    @Test
    void memoryFallsWhenBlocksGoAndFreedRecordsAreReused() {
        PartitionIndex index = new PartitionIndex(16);
        long empty = index.memoryBytes();
        SplittableRandom rnd = new SplittableRandom(3);
        long[][] prompts = new long[2000][];
        for (int i = 0; i < prompts.length; i++) {
            prompts[i] = chain(rnd);
            storeChain(index, 1, prompts[i]);
        }
        long full = index.memoryBytes();
        assertTrue(full - empty >= 2000L * BLOCKS * NodeRecords.BYTES, "at least a record per block: " + full);
        index.clear(1, 0);
        long cleared = index.memoryBytes();
        assertTrue(
                cleared < full - 2000L * BLOCKS * NodeRecords.BYTES + 1,
                "records of cleared blocks are free: " + cleared);
        for (long[] prompt : prompts) {
            storeChain(index, 2, prompt);
        }
        assertTrue(index.memoryBytes() <= full + 4096, "the same blocks again take the freed records");
    }

    @Test
    void aFloodOfCpuTierBlocksIsEvictedOldestFirstAndOnlyFromTheLeaves() {
        PartitionIndex index = new PartitionIndex(16);
        SplittableRandom rnd = new SplittableRandom(13);
        long budget = 1_000_000;
        long[] newest = null;
        for (int round = 0; round < 40; round++) {
            for (int c = 0; c < 200; c++) {
                newest = chain(rnd);
                assertEquals(
                        StoreOutcome.OK,
                        index.store(
                                c % 2,
                                0,
                                StorageTier.HOST_PINNED,
                                false,
                                0,
                                BlockHasher.sequenceHashes(newest),
                                newest));
            }
            index.evictTo(budget);
            assertTrue(index.memoryBytes() <= budget, "round " + round + ": " + index.memoryBytes());
        }
        assertTrue(index.evictedBlocks() > 40 * 200 * BLOCKS / 2, "evicted " + index.evictedBlocks());
        OwnerMatch m = index.match(newest).get(0);
        assertEquals(BLOCKS, m.cpuBlocks(), "the newest chain is whole in the CPU tier");
        // Edges go from the leaves: whatever is left of any chain is a prefix, so it still matches from the root.
        assertTrue(index.lowerTierEdgeCount(StorageTier.HOST_PINNED) > 0);
        PartitionIndex copy = DumpReplay.replay(index);
        assertEquals(
                index.lowerTierEdgeCount(StorageTier.HOST_PINNED),
                copy.lowerTierEdgeCount(StorageTier.HOST_PINNED),
                "every edge left is reachable from a root edge and dumped");
    }

    @Test
    void lowerTierEdgesChainedIntoACycleAreEvictedToo() {
        PartitionIndex index = new PartitionIndex(16);
        long a = 1001;
        long b = 1002;
        assertEquals(StoreOutcome.OK, index.store(1, 0, StorageTier.DISK, false, 0, new long[] {a}, new long[] {1}));
        assertEquals(StoreOutcome.OK, index.store(1, 0, StorageTier.DISK, true, a, new long[] {b}, new long[] {2}));
        assertEquals(StoreOutcome.OK, index.store(2, 0, StorageTier.DISK, true, b, new long[] {a}, new long[] {3}));
        assertEquals(3, index.lowerTierEdgeCount(StorageTier.DISK));
        assertEquals(3, index.evictTo(0));
        assertEquals(0, index.lowerTierEdgeCount(StorageTier.DISK));
        assertEquals(0, index.heldBlocks(1, 0, StorageTier.DISK) + index.heldBlocks(2, 0, StorageTier.DISK));
    }

    @Test
    void aFullTreeMakesRoomForNewBlocksAndRefusesOnlyAChainLongerThanItCanHold() {
        PartitionIndex index = new PartitionIndex(16, 100);
        SplittableRandom rnd = new SplittableRandom(21);
        long[] last = null;
        for (int i = 0; i < 50; i++) {
            last = chain(rnd);
            storeChain(index, i % 3, last);
            assertTrue(index.blockCount() <= 100, "at most the tree's capacity: " + index.blockCount());
        }
        assertEquals(50L * BLOCKS - index.blockCount(), index.evictedBlocks());
        assertEquals(BLOCKS, index.match(last).get(0).gpuBlocks(), "the newest chain whole");
        long[] tooLong = new long[101];
        for (int i = 0; i < tooLong.length; i++) {
            tooLong[i] = rnd.nextLong();
        }
        assertEquals(
                StoreOutcome.INDEX_FULL,
                index.store(1, 0, StorageTier.DEVICE, false, 0, BlockHasher.sequenceHashes(tooLong), tooLong));
        assertTrue(index.blockCount() <= 100);
    }

    private static Map<Long, Integer> scores(List<OwnerMatch> matches) {
        Map<Long, Integer> out = new HashMap<>();
        for (OwnerMatch m : matches) {
            out.put(m.workerId(), m.gpuBlocks());
        }
        return out;
    }

    @Test
    void theOwnersRunningSumMatchesACountOfEveryOwnerThroughEveryKindOfChange() {
        PartitionIndex index = new PartitionIndex(16);
        SplittableRandom rnd = new SplittableRandom(11);
        StorageTier[] tiers = {StorageTier.DEVICE, StorageTier.HOST_PINNED, StorageTier.DISK};
        long[][] stored = new long[64][];
        for (int step = 0; step < 4_000; step++) {
            long worker = rnd.nextInt(40);
            int rank = rnd.nextInt(3);
            int kind = rnd.nextInt(20);
            int slot = rnd.nextInt(stored.length);
            if (kind < 12 || stored[slot] == null) {
                long[] local = chain(rnd);
                stored[slot] = local;
                index.store(
                        worker,
                        rank,
                        tiers[rnd.nextInt(tiers.length)],
                        false,
                        0,
                        BlockHasher.sequenceHashes(local),
                        local);
            } else if (kind < 16) {
                index.remove(worker, rank, tiers[rnd.nextInt(tiers.length)], BlockHasher.sequenceHashes(stored[slot]));
            } else if (kind < 17) {
                index.clear(worker, rank);
            } else if (kind < 18) {
                index.removeWorker(worker);
            } else if (kind < 19) {
                index.removeWorkerDpRank(worker, rank);
            } else {
                index.evictTo(index.memoryBytes() * 3 / 4);
            }
            if (step % 7 == 0 || kind >= 16) {
                assertEquals(index.memoryBytesRecounted(), index.memoryBytes(), "after step " + step);
            }
        }
        assertTrue(index.ownerCount() > 0);
    }

    private static long[] chain(SplittableRandom rnd) {
        long[] local = new long[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            local[i] = rnd.nextLong();
        }
        return local;
    }

    private static void storeChain(PartitionIndex index, long worker, long[] local) {
        assertEquals(
                StoreOutcome.OK,
                index.store(worker, 0, StorageTier.DEVICE, false, 0, BlockHasher.sequenceHashes(local), local));
    }
}
