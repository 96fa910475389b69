package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.index.PartitionIndex;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The node-wide budget over several partitions' indexes. */
class MemoryBudgetTest {

    @Test
    void partitionsShareTheBudgetInProportionAndTheSumStaysUnderIt() {
        long limit = 4L * 1024 * 1024;
        MemoryBudget budget = new MemoryBudget(limit);
        PartitionIndex big = new PartitionIndex(16);
        PartitionIndex small = new PartitionIndex(16);
        MemoryBudget.Share bigShare = budget.share();
        MemoryBudget.Share smallShare = budget.share();
        SplittableRandom rnd = new SplittableRandom(1);
        for (int round = 0; round < 60; round++) {
            for (int i = 0; i < 3; i++) {
                store(big, rnd);
            }
            bigShare.changed(big);
            store(small, rnd);
            smallShare.changed(small);
            assertTrue(budget.usedBytes() <= limit, "round " + round + ": " + budget.usedBytes());
            assertEquals(
                    big.memoryBytes() + small.memoryBytes() + 2 * MemoryBudget.PARTITION_OVERHEAD_BYTES,
                    budget.usedBytes(),
                    "the sum of what each reported, with each partition's overhead");
        }
        assertTrue(budget.evictedBlocks() > 0);
        assertEquals(big.evictedBlocks() + small.evictedBlocks(), budget.evictedBlocks());
        assertTrue(
                small.blockCount() > 0 && big.blockCount() > small.blockCount(),
                "the partition that grows faster keeps more: " + big.blockCount() + " vs " + small.blockCount());

        smallShare.closed();
        assertEquals(
                big.memoryBytes() + MemoryBudget.PARTITION_OVERHEAD_BYTES,
                budget.usedBytes(),
                "a closed partition no longer counts");
    }

    @Test
    void aSmallPartitionThatTipsTheSumOverTheBudgetTakesItBackUnderAtOnce() {
        PartitionIndex big = new PartitionIndex(16);
        PartitionIndex small = new PartitionIndex(16);
        SplittableRandom rnd = new SplittableRandom(2);
        for (int i = 0; i < 4; i++) {
            store(big, rnd);
        }
        store(small, rnd);
        // The big one alone takes all but a little of the budget; the small one's next change goes over it.
        long limit = big.memoryBytes() + small.memoryBytes() + 2 * MemoryBudget.PARTITION_OVERHEAD_BYTES + 50_000;
        MemoryBudget budget = new MemoryBudget(limit);
        MemoryBudget.Share bigShare = budget.share();
        MemoryBudget.Share smallShare = budget.share();
        bigShare.changed(big);
        smallShare.changed(small);
        assertEquals(0, budget.evictedBlocks(), "within the budget");
        store(small, rnd);
        smallShare.changed(small);
        assertTrue(budget.evictedBlocks() > 0);
        assertTrue(budget.usedBytes() <= limit, budget.usedBytes() + " of " + limit);
    }

    @Test
    void aPartitionTakesBackOnlyWhatItAddedNotWhatAnotherCannotGiveBack() {
        // The big partition's arrays outlive its blocks: emptied, it still holds more than the budget allows.
        PartitionIndex big = new PartitionIndex(16);
        SplittableRandom rnd = new SplittableRandom(3);
        long[][] chains = new long[20_000][];
        for (int c = 0; c < chains.length; c++) {
            long[] local = rnd.longs(8).toArray();
            chains[c] = BlockHasher.sequenceHashes(local);
            big.store(0, 0, StorageTier.DEVICE, false, 0, chains[c], local);
        }
        for (long[] chain : chains) {
            big.remove(0, 0, StorageTier.DEVICE, chain);
        }
        PartitionIndex small = new PartitionIndex(16);
        store(small, rnd);
        // Over by more than the small one could ever give back, though not by much of the whole.
        long limit = big.memoryBytes() + small.memoryBytes() + 2 * MemoryBudget.PARTITION_OVERHEAD_BYTES - 250_000;
        MemoryBudget budget = new MemoryBudget(limit);
        MemoryBudget.Share bigShare = budget.share();
        MemoryBudget.Share smallShare = budget.share();
        smallShare.changed(small);
        bigShare.changed(big);
        assertTrue(budget.usedBytes() > limit, "the big one cannot get under: " + budget.usedBytes() + " of " + limit);
        // The small one's next change goes over too: it gives back its share, not the big one's excess.
        long[] local = rnd.longs(8).toArray();
        small.store(1, 0, StorageTier.DEVICE, false, 0, BlockHasher.sequenceHashes(local), local);
        long before = small.blockCount();
        smallShare.changed(small);
        assertTrue(budget.evictedBlocks() > 0);
        assertTrue(small.blockCount() >= before / 3, "the small one kept " + small.blockCount() + " of " + before);
    }

    @Test
    void newPartitionsAreRefusedOnceTheirFixedCostWouldTakeHalfTheBudget() {
        long limit = 20 * MemoryBudget.PARTITION_FIXED_BYTES;
        MemoryBudget budget = new MemoryBudget(limit);
        assertEquals(null, budget.refuseNewPartition(9), "the tenth takes exactly half");
        String refusal = budget.refuseNewPartition(10);
        assertTrue(
                refusal != null && refusal.contains("--max-index-memory") && refusal.contains("10 partitions"),
                refusal);
        assertEquals(null, MemoryBudget.UNLIMITED.refuseNewPartition(1_000_000));
    }

    /** 1,000 chains of 8 blocks. */
    private static void store(PartitionIndex index, SplittableRandom rnd) {
        for (int c = 0; c < 1000; c++) {
            long[] local = rnd.longs(8).toArray();
            index.store(c % 4, 0, StorageTier.DEVICE, false, 0, BlockHasher.sequenceHashes(local), local);
        }
    }
}
