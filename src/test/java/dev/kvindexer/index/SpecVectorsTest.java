package dev.kvindexer.index;

import static dev.kvindexer.index.IndexFixture.remove;
import static dev.kvindexer.index.IndexFixture.scores;
import static dev.kvindexer.index.IndexFixture.store;
import static dev.kvindexer.index.IndexFixture.storeUnder;
import static dev.kvindexer.index.IndexFixture.tiers;
import static dev.kvindexer.index.IndexFixture.w;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The test vectors T1–T5 and T7 of docs/protocol/index.md#test-vectors at index level (T6 lives in TierBreakdownTest).
 */
class SpecVectorsTest {

    @Test
    void t1StoreQueryRemove() {
        PartitionIndex index = new PartitionIndex(16);
        assertEquals(StoreOutcome.OK, store(index, 0, 1, 2, 3));
        assertEquals(Map.of("0:0", 3), scores(index, 1, 2, 3));

        assertEquals(StoreOutcome.OK, store(index, 1, 1, 4, 5));
        assertEquals(Map.of("0:0", 3, "1:0", 1), scores(index, 1, 2, 3));
        assertEquals(1, index.childCountAt());
        assertEquals(List.of(w(0), w(1)), index.holdersAt(1));
        assertEquals(2, index.childCountAt(1));
        assertEquals(List.of(w(0)), index.holdersAt(1, 2));
        assertEquals(List.of(w(1)), index.holdersAt(1, 4));

        assertEquals(0, remove(index, 1, 5));
        assertEquals(2, index.heldBlocks(1, 0, StorageTier.DEVICE));
        assertEquals(0, remove(index, 1, 4));
        assertEquals(1, index.heldBlocks(1, 0, StorageTier.DEVICE));

        assertEquals(StoreOutcome.OK, storeUnder(index, 1, 100, 2, 6, 7));
        assertEquals(Map.of("0:0", 3, "1:0", 2), scores(index, 1, 2, 3));
        assertEquals(4, index.heldBlocks(1, 0, StorageTier.DEVICE));
        assertEquals(List.of(w(0), w(1)), index.holdersOfBlock(0, 0, 200));
        assertEquals(List.of(w(0), w(1)), index.holdersOfBlock(1, 0, 200));
    }

    @Test
    void t2UnknownParentStoresNothing() {
        PartitionIndex index = new PartitionIndex(16);
        assertEquals(StoreOutcome.PARENT_BLOCK_NOT_FOUND, storeUnder(index, 0, 12345, 1, 2, 3));
        assertTrue(index.isEmpty());
        assertEquals(0, index.heldBlocks(0, 0, StorageTier.DEVICE));
        store(index, 0, 1);
        assertEquals(StoreOutcome.PARENT_BLOCK_NOT_FOUND, storeUnder(index, 0, 12345, 2, 3));
        assertEquals(StoreOutcome.PARENT_BLOCK_NOT_FOUND, storeUnder(index, 1, 100, 2, 3)); // parent is per owner
        assertEquals(1, index.blockCount());
    }

    @Test
    void t2RemoveOfUnknownHashStillAppliesTheRest() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1, 2, 3);
        assertEquals(1, index.remove(0, 0, StorageTier.DEVICE, new long[] {99_900, 300}));
        assertEquals(2, index.heldBlocks(0, 0, StorageTier.DEVICE));
        assertEquals(Map.of("0:0", 2), scores(index, 1, 2, 3));
        assertEquals(2, remove(index, 7, 1, 2)); // unknown owner
    }

    @Test
    void t2InvalidBlockSequence() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1);
        assertEquals(StoreOutcome.INVALID_BLOCK_SEQUENCE, storeUnder(index, 0, 100, 1, 2, 3));
        assertEquals(1, index.heldBlocks(0, 0, StorageTier.DEVICE));
        assertEquals(StoreOutcome.INVALID_BLOCK_SEQUENCE, store(index, 0, 5, 6, 5));
        assertEquals(1, index.heldBlocks(0, 0, StorageTier.DEVICE));
        long[] longChain = new long[40];
        for (int i = 0; i < longChain.length; i++) {
            longChain[i] = 1000 + i;
        }
        longChain[39] = 1003; // repeat beyond the small-chain check
        assertEquals(StoreOutcome.INVALID_BLOCK_SEQUENCE, store(index, 0, longChain));
        assertEquals(1, index.blockCount());
    }

    @Test
    void t3Clear() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 0, 1, 3);
        store(index, 1, 0, 2, 3);
        assertEquals(Map.of("0:0", 1, "1:0", 1), scores(index, 0));
        index.clear(0, 0);
        assertEquals(Map.of("1:0", 2), scores(index, 0, 2));
        assertEquals(Map.of("1:0", 1), scores(index, 0, 1, 3));
        index.clear(0, 0);
        index.clear(42, 0);
        assertEquals(Map.of("1:0", 1), scores(index, 0));
    }

    @Test
    void t4RemoveWorker() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1, 2, 3);
        store(index, 1, 1, 2, 3);
        store(index, 2, 1, 4, 5);
        assertEquals(List.of(w(0), w(1), w(2)), index.holdersOfBlock(1, 0, 100));
        index.removeWorker(0);
        assertEquals(List.of(w(1), w(2)), index.holdersOfBlock(1, 0, 100));
        assertEquals(Map.of("1:0", 3, "2:0", 1), scores(index, 1, 2, 3));
        assertEquals(0, index.heldBlocks(0, 0, StorageTier.DEVICE));
    }

    static final long[] HV12 = {
        11L,
        Long.parseUnsignedLong("10497221074644697006"),
        Long.parseUnsignedLong("8340346278797266542"),
        Long.parseUnsignedLong("4128529435866013841")
    };

    @Test
    void t5TierDispatchAndDumpRoundTrip() {
        PartitionIndex index = new PartitionIndex(16);
        index.store(7, 0, StorageTier.DEVICE, false, 0, new long[] {HV12[0], HV12[1]}, new long[] {11, 12});
        index.store(7, 0, StorageTier.HOST_PINNED, true, HV12[1], new long[] {HV12[2]}, new long[] {13});
        assertEquals(Map.of("7:0", List.of(2, 3, 3)), tiers(index, 11, 12, 13));

        index.store(7, 0, StorageTier.DISK, true, HV12[2], new long[] {HV12[3]}, new long[] {14});
        assertEquals(Map.of("7:0", List.of(2, 3, 4)), tiers(index, 11, 12, 13, 14));

        List<Object[]> events = new ArrayList<>();
        index.dump((wk, r, tier, hasParent, parent, hash, local) ->
                events.add(new Object[] {wk, r, tier, hasParent, parent, hash, local}));
        assertEquals(4, events.size());
        assertEquals(StorageTier.DEVICE, events.get(0)[2]);
        assertEquals(false, events.get(0)[3]);
        assertEquals(HV12[0], events.get(0)[5]);
        assertEquals(HV12[0], events.get(1)[4]);
        assertEquals(HV12[1], events.get(1)[5]);
        assertEquals(StorageTier.HOST_PINNED, events.get(2)[2]);
        assertEquals(StorageTier.DISK, events.get(3)[2]);

        PartitionIndex copy = DumpReplay.replay(index);
        assertEquals(Map.of("7:0", List.of(2, 3, 4)), tiers(copy, 11, 12, 13, 14));
        assertEquals(Map.of("7:0", List.of(2, 3, 3)), tiers(copy, 11, 12, 13));
    }

    @Test
    void t7HttpScenarioAtIndexLevel() {
        PartitionIndex index = new PartitionIndex(4);
        long[] dev = {HV12[0], HV12[1]};
        long[] loc = {11, 12};
        index.store(7, 0, StorageTier.DEVICE, false, 0, dev, loc);
        index.store(8, 0, StorageTier.DEVICE, false, 0, dev, loc);
        index.store(7, 0, StorageTier.HOST_PINNED, true, HV12[1], new long[] {HV12[2]}, new long[] {13});

        TierBreakdown b = TierBreakdown.of(index.match(new long[] {11, 12, 13}), index.blockSize());
        assertEquals(List.of(new TierBreakdown.Score(7, 0, 8), new TierBreakdown.Score(8, 0, 8)), b.scores());
        assertEquals(
                new TierBreakdown.InstanceBreakdown(7, 12, 8, new int[] {0}, new long[] {8}, 12, 12), b.instance(7));
        assertEquals(new TierBreakdown.InstanceBreakdown(8, 8, 8, new int[] {0}, new long[] {8}, 8, 8), b.instance(8));
        assertEquals(2, b.instances().size());
    }

    /** docs/api/dynamo.md#post-query_tiered_by_hash: the same setup answered tier by tier, as Dynamo's /query_tiered_by_hash renders it. */
    @Test
    void t7TieredAsTheRemoteIndexerAsksForIt() {
        PartitionIndex index = new PartitionIndex(4);
        long[] dev = {HV12[0], HV12[1]};
        long[] loc = {11, 12};
        index.store(8, 0, StorageTier.DEVICE, false, 0, dev, loc);
        index.store(7, 0, StorageTier.DEVICE, false, 0, dev, loc);
        index.store(7, 0, StorageTier.HOST_PINNED, true, HV12[1], new long[] {HV12[2]}, new long[] {13});

        TieredMatch t = index.matchTiered(new long[] {11, 12, 13});
        assertArrayEquals(new long[] {7, 8}, t.device().workers(), "sorted by worker id");
        assertArrayEquals(new int[] {2, 2}, t.device().blocks(), "device depth in blocks");
        assertEquals(1, t.lowerTiers().size(), "only the tier that has an index");
        TieredMatch.Tier host = t.lowerTiers().get(0);
        assertEquals(StorageTier.HOST_PINNED, host.tier());
        assertArrayEquals(new long[] {7, 8}, host.hits().workers());
        assertArrayEquals(new int[] {1, 0}, host.hits().blocks(), "every owner of the continuation, zeros included");

        TieredMatch cold = index.matchTiered(new long[] {99});
        assertEquals(0, cold.device().size());
        assertEquals(0, cold.lowerTiers().get(0).hits().size(), "an empty continuation still lists the tier");
        assertEquals(Map.of("7:0", 3, "8:0", 2), scoresWithTiers(index), "a tiered query leaves nothing behind");
    }

    private static Map<String, Integer> scoresWithTiers(PartitionIndex index) {
        Map<String, Integer> out = new java.util.TreeMap<>();
        for (OwnerMatch m : index.match(new long[] {11, 12, 13})) {
            out.put(m.workerId() + ":" + m.dpRank(), m.diskBlocks());
        }
        return out;
    }
}
