package dev.kvindexer.index;

import static dev.kvindexer.index.IndexFixture.remove;
import static dev.kvindexer.index.IndexFixture.scores;
import static dev.kvindexer.index.IndexFixture.store;
import static dev.kvindexer.index.IndexFixture.storeUnder;
import static dev.kvindexer.index.IndexFixture.tiers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Project rules beyond the reference test vectors: reference counts, per-rank clear, detached subtrees, many owners. */
class PartitionIndexBehaviourTest {

    @Test
    void sameHashStoredTwiceNeedsTwoRemoves() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1, 2);
        store(index, 0, 1, 2);
        assertEquals(2, index.copies(0, 0, StorageTier.DEVICE, 100));
        assertEquals(0, remove(index, 0, 2));
        assertEquals(Map.of("0:0", 2), scores(index, 1, 2));
        assertEquals(0, remove(index, 0, 2));
        assertEquals(Map.of("0:0", 1), scores(index, 1, 2));
        assertEquals(1, remove(index, 0, 2));
        assertEquals(2, index.copies(0, 0, StorageTier.DEVICE, 100));
        index.clear(0, 0); // drops every copy
        assertEquals(Map.of(), scores(index, 1, 2));
        assertEquals(0, index.copies(0, 0, StorageTier.DEVICE, 100));
        assertTrue(index.isEmpty());
    }

    @Test
    void lowerTierReferenceCounts() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1);
        for (int i = 0; i < 2; i++) {
            index.store(0, 0, StorageTier.DISK, true, 100, new long[] {200}, new long[] {2});
        }
        assertEquals(0, index.remove(0, 0, StorageTier.DISK, new long[] {200}));
        assertEquals(Map.of("0:0", List.of(1, 1, 2)), tiers(index, 1, 2));
        assertEquals(0, index.remove(0, 0, StorageTier.DISK, new long[] {200}));
        assertEquals(Map.of("0:0", List.of(1, 1, 1)), tiers(index, 1, 2));
        assertEquals(0, index.lowerTierEdgeCount(StorageTier.DISK));
        assertEquals(1, index.remove(0, 0, StorageTier.DISK, new long[] {200}));
        assertEquals(1, index.remove(0, 0, StorageTier.EXTERNAL, new long[] {200}));
    }

    @Test
    void clearIsScopedToOneDpRankInEveryTier() {
        PartitionIndex index = new PartitionIndex(16);
        for (int rank = 0; rank < 2; rank++) {
            index.store(3, rank, StorageTier.DEVICE, false, 0, new long[] {100, 200}, new long[] {1, 2});
            index.store(3, rank, StorageTier.HOST_PINNED, true, 200, new long[] {300}, new long[] {3});
        }
        index.clear(3, 1);
        assertEquals(Map.of("3:0", List.of(2, 3, 3)), tiers(index, 1, 2, 3));
        assertEquals(1, index.lowerTierEdgeCount(StorageTier.HOST_PINNED));
        assertEquals(2, index.ownerCount()); // a cleared owner stays known
        index.store(3, 1, StorageTier.DEVICE, false, 0, new long[] {100}, new long[] {1});
        assertEquals(Map.of("3:0", List.of(2, 3, 3), "3:1", List.of(1, 1, 1)), tiers(index, 1, 2, 3));
    }

    @Test
    void removeWorkerDpRankDropsOnlyThatOwner() {
        PartitionIndex index = new PartitionIndex(16);
        for (int rank = 0; rank < 3; rank++) {
            index.store(3, rank, StorageTier.DEVICE, false, 0, new long[] {100, 200}, new long[] {1, 2});
            index.store(3, rank, StorageTier.DISK, true, 200, new long[] {300}, new long[] {3});
        }
        index.removeWorkerDpRank(3, 1);
        assertEquals(Map.of("3:0", List.of(2, 2, 3), "3:2", List.of(2, 2, 3)), tiers(index, 1, 2, 3));
        assertEquals(2, index.ownerCount());
        assertEquals(0, index.heldBlocks(3, 1, StorageTier.DEVICE));
        index.removeWorker(3);
        assertTrue(index.isEmpty());
        assertEquals(0, index.ownerCount());
        assertEquals(0, index.holderEntryCount());
    }

    @Test
    void removingANonLeafDetachesItsSubtree() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1, 2, 3);
        assertEquals(0, remove(index, 0, 2));
        assertEquals(Map.of("0:0", 1), scores(index, 1, 2, 3));
        assertEquals(-1, index.childCountAt(1, 2));
        assertEquals(2, index.blockCount()); // node 3 lives on, detached, until removed
        assertEquals(2, index.heldBlocks(0, 0, StorageTier.DEVICE));

        List<Long> dumped = new ArrayList<>();
        index.dump((wk, r, t, hp, p, hash, local) -> dumped.add(hash));
        assertEquals(List.of(100L), dumped);

        // Storing under the detached node works but stays unreachable.
        assertEquals(StoreOutcome.OK, storeUnder(index, 0, 300, 4));
        assertEquals(Map.of("0:0", 1), scores(index, 1, 2, 3, 4));

        // Re-storing the chain moves 300 to the live position; its old subtree stays detached.
        assertEquals(StoreOutcome.OK, storeUnder(index, 0, 100, 2, 3));
        assertEquals(Map.of("0:0", 3), scores(index, 1, 2, 3, 4));
        assertEquals(0, remove(index, 0, 4));
        assertEquals(3, index.blockCount());
    }

    @Test
    void removingAWorkerFindsEveryBlockItHoldsWhateverItsShape() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1, 2, 3); // a chain from the root: found by walking down what it holds
        store(index, 1, 1, 2, 3, 4);
        store(index, 2, 1, 2, 3);
        remove(index, 2, 2); // holds 1 and 3, not 2: its 3 is under no block it holds
        index.removeWorker(0);
        assertEquals(Map.of("1:0", 4, "2:0", 1), scores(index, 1, 2, 3, 4));
        index.removeWorker(2);
        assertEquals(Map.of("1:0", 4), scores(index, 1, 2, 3, 4));
        assertEquals(4, index.holderEntryCount(), "only the last worker's four blocks are held");
        index.removeWorker(1);
        assertTrue(index.isEmpty());
        assertEquals(0, index.holderEntryCount());
    }

    @Test
    void ownerMissingAMiddleBlockStopsThere() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1, 2, 3);
        store(index, 1, 1, 2);
        remove(index, 0, 2); // node 2 still held by w1: w0's node 3 stays attached
        assertEquals(Map.of("0:0", 1, "1:0", 2), scores(index, 1, 2, 3));
        List<String> dumped = new ArrayList<>();
        index.dump((wk, r, t, hp, p, hash, local) -> dumped.add(wk + "/" + hash));
        assertEquals(List.of("0/100", "1/100", "1/200"), dumped);
    }

    @Test
    void eachOwnerKeepsItsOwnEngineHashes() {
        PartitionIndex index = new PartitionIndex(16);
        index.store(1, 0, StorageTier.DEVICE, false, 0, new long[] {10, 20}, new long[] {1, 2});
        index.store(2, 0, StorageTier.DEVICE, false, 0, new long[] {11, 21}, new long[] {1, 2});
        assertEquals(StoreOutcome.OK, index.store(2, 0, StorageTier.DEVICE, true, 21, new long[] {31}, new long[] {3}));
        assertEquals(Map.of("1:0", 2, "2:0", 3), scores(index, 1, 2, 3));
        List<String> dumped = new ArrayList<>();
        index.dump((wk, r, t, hp, p, hash, local) -> dumped.add(wk + ":" + (hp ? p : "-") + ">" + hash));
        assertEquals(List.of("1:->10", "2:->11", "1:10>20", "2:11>21", "2:21>31"), dumped);
        assertEquals(0, index.remove(2, 0, StorageTier.DEVICE, new long[] {11}));
        assertEquals(Map.of("1:0", 2), scores(index, 1, 2, 3));
    }

    /**
     * Engines that do not chain their hashes can give one engine hash to blocks at different positions. The shared
     * engine-hash table leads to one of them; each owner still finds, removes and clears its own.
     */
    @Test
    void oneEngineHashAtTwoPositionsStaysApartPerOwner() {
        PartitionIndex index = new PartitionIndex(16);
        index.store(1, 0, StorageTier.DEVICE, false, 0, new long[] {7}, new long[] {1}); // hash 7 at path [1]
        index.store(2, 0, StorageTier.DEVICE, false, 0, new long[] {7}, new long[] {2}); // hash 7 at path [2]
        index.store(3, 0, StorageTier.DEVICE, false, 0, new long[] {7}, new long[] {2});
        assertEquals(Map.of("1:0", 1), scores(index, 1));
        assertEquals(Map.of("2:0", 1, "3:0", 1), scores(index, 2));
        // The first position empties, so the table no longer names any node for hash 7.
        assertEquals(0, index.remove(1, 0, StorageTier.DEVICE, new long[] {7}));
        // Worker 1 stores hash 7 at the second position: the table now names it, which worker 2 reached on its own.
        index.store(1, 0, StorageTier.DEVICE, false, 0, new long[] {7}, new long[] {2});
        assertEquals(Map.of("1:0", 1, "2:0", 1, "3:0", 1), scores(index, 2));
        index.clear(2, 0); // found both ways, left once
        assertEquals(Map.of("1:0", 1, "3:0", 1), scores(index, 2));
        assertEquals(0, index.heldBlocks(2, 0, StorageTier.DEVICE));
        assertEquals(2, index.holderEntryCount());
        assertEquals(1, index.copies(3, 0, StorageTier.DEVICE, 7));
        assertEquals(0, index.remove(3, 0, StorageTier.DEVICE, new long[] {7}));
        assertEquals(0, index.remove(1, 0, StorageTier.DEVICE, new long[] {7}));
        assertTrue(index.isEmpty());
    }

    @Test
    void anotherEngineHashForAHeldBlockReplacesTheFirst() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 1, 1, 2);
        store(index, 2, 1, 2);
        index.store(2, 0, StorageTier.DEVICE, false, 0, new long[] {500}, new long[] {1}); // same block, new hash
        assertEquals(1, index.remove(2, 0, StorageTier.DEVICE, new long[] {100}), "the old hash is gone");
        assertEquals(Map.of("1:0", 2, "2:0", 2), scores(index, 1, 2));
        assertEquals(1, index.copies(2, 0, StorageTier.DEVICE, 500));
        assertEquals(0, index.remove(2, 0, StorageTier.DEVICE, new long[] {500}));
        assertEquals(Map.of("1:0", 2), scores(index, 1, 2), "worker 2's block 200 no longer has its parent");
        index.clear(1, 0);
        assertEquals(0, index.heldBlocks(1, 0, StorageTier.DEVICE));
        assertEquals(1, index.heldBlocks(2, 0, StorageTier.DEVICE));
    }

    @Test
    void moreThan64OwnersUseWiderHolderSets() {
        PartitionIndex index = new PartitionIndex(16);
        for (int worker = 0; worker < 200; worker++) {
            long[] hashes = new long[1 + worker % 5];
            long[] locals = new long[hashes.length];
            for (int i = 0; i < hashes.length; i++) {
                hashes[i] = (i + 1) * 100;
                locals[i] = i + 1;
            }
            index.store(worker, 0, StorageTier.DEVICE, false, 0, hashes, locals);
        }
        List<OwnerMatch> m = index.match(new long[] {1, 2, 3, 4, 5, 6});
        assertEquals(200, m.size());
        for (OwnerMatch o : m) {
            assertEquals(1 + o.workerId() % 5, o.gpuBlocks());
        }
        for (int worker = 0; worker < 150; worker++) {
            index.removeWorker(worker);
        }
        index.store(1000, 0, StorageTier.DEVICE, false, 0, new long[] {100}, new long[] {1}); // reuses a low id
        m = index.match(new long[] {1, 2, 3, 4, 5, 6});
        assertEquals(51, m.size());
        assertFalse(index.isEmpty());
    }

    @Test
    void emptyQueryAndUnknownPrefixMatchNothing() {
        PartitionIndex index = new PartitionIndex(16);
        store(index, 0, 1, 2);
        assertEquals(List.of(), index.match(new long[0]));
        assertEquals(List.of(), index.match(new long[] {2, 1}));
    }
}
