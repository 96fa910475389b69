package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * An engine taken off the tree (a restart, a clear, an unregistration) finds what it holds from its own branches and
 * the root, without looking at the branches of the other engines that share its prefix; where that cannot find
 * everything it holds, the slower ways still do.
 */
class OwnerHoldingsTest {
    private static final long[] SYSTEM = {1, 2};

    private final PartitionIndex index = new PartitionIndex(4);
    private final SplittableRandom rnd = new SplittableRandom(11);
    private final List<long[]> conversations = new ArrayList<>();

    @Test
    void aFleetSharingASystemPromptFindsEachEnginesHoldingsFromItsBranches() {
        List<Long> engines = new ArrayList<>();
        for (int e = 0; e < 60; e++) {
            long w = 100 + e;
            engines.add(w);
            index.store(w, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
            for (int c = 0; c < 3; c++) {
                converse(w, 2 + rnd.nextInt(6));
            }
        }
        // Churn: tails removed and stored again, whole engines gone and back, so node ids are freed and reused.
        for (int round = 0; round < 200; round++) {
            long w = engines.get(rnd.nextInt(engines.size()));
            switch (rnd.nextInt(4)) {
                case 0 -> {
                    long[] c = conversations.get(rnd.nextInt(conversations.size()));
                    long[] tail = {c[c.length - 1]};
                    index.remove(w, 0, StorageTier.DEVICE, tail);
                }
                case 1 -> {
                    index.removeWorker(w);
                    index.store(w, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
                }
                case 2 -> {
                    // Another engine's conversation: the engine joins branch nodes that are already there.
                    long[] c = conversations.get(rnd.nextInt(conversations.size()));
                    index.store(w, 0, StorageTier.DEVICE, true, SYSTEM[1], c, c);
                }
                default -> converse(w, 1 + rnd.nextInt(5));
            }
        }
        for (long w : engines) {
            Owner o = index.owners.find(w, 0);
            IntArrayList fromBranches = index.tree.heldFromBranches(o);
            assertNotNull(fromBranches, "engine " + w + " found from its branches");
            assertArrayEquals(sorted(index.tree.heldByScan(o)), sorted(fromBranches), "engine " + w);
            assertTrue(
                    o.device.branches.size() <= 2 * o.device.blocks + 16,
                    "its listed branches stay bounded by what it holds");
        }
    }

    @Test
    void anEngineThatKeepsStoringAndRemovingConversationsListsNoMoreThanItHolds() {
        index.store(5, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        index.store(6, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        converse(6, 3);
        for (int i = 0; i < 500; i++) {
            long[] c = rnd.longs(3).toArray();
            index.store(5, 0, StorageTier.DEVICE, true, SYSTEM[1], c, c);
            index.remove(5, 0, StorageTier.DEVICE, c);
        }
        Owner o = index.owners.find(5, 0);
        assertTrue(o.device.branches.size() <= 2 * o.device.blocks + 16, o.device.branches.size() + " listed");
        assertArrayEquals(sorted(index.tree.heldByScan(o)), sorted(index.tree.heldFromBranches(o)));
    }

    @Test
    void anEngineThatLeftItsConversationsGivesBackTheirListsRoom() {
        index.store(5, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        index.store(6, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        converse(6, 1);
        List<long[]> held = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            long[] c = {rnd.nextLong()};
            held.add(c);
            index.store(5, 0, StorageTier.DEVICE, true, SYSTEM[1], c, c);
        }
        Owner o = index.owners.find(5, 0);
        assertTrue(o.device.branches.size() >= 20_000, "each conversation is a branch of the system prompt");
        for (long[] c : held) {
            index.remove(5, 0, StorageTier.DEVICE, c);
        }
        assertTrue(
                o.device.branches.elements().length <= 4 * o.device.blocks + 64,
                o.device.branches.elements().length + " entries' room for " + o.device.blocks + " blocks");
        assertEquals(index.memoryBytesRecounted(), index.memoryBytes());
    }

    @Test
    void aListedBranchWhoseIdCameBackLaidOutAfterItsParentIsFoundOnce() {
        index.store(5, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        index.store(6, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        index.store(6, 0, StorageTier.DEVICE, true, SYSTEM[1], new long[] {10}, new long[] {10});
        long[] branch = {20, 21};
        index.store(5, 0, StorageTier.DEVICE, true, SYSTEM[1], branch, branch);
        index.remove(5, 0, StorageTier.DEVICE, branch);
        // Engine 5 now holds block 10, and block 40 after it takes the freed id of block 20, right after 10's.
        index.store(5, 0, StorageTier.DEVICE, true, SYSTEM[1], new long[] {10}, new long[] {10});
        index.store(5, 0, StorageTier.DEVICE, true, 10, new long[] {40}, new long[] {40});
        Owner o = index.owners.find(5, 0);
        assertTrue(o.device.branches.size() > 0, "block 20's node is still listed");
        IntArrayList fromBranches = index.tree.heldFromBranches(o);
        assertNotNull(fromBranches);
        assertArrayEquals(sorted(index.tree.heldByScan(o)), sorted(fromBranches));
    }

    @Test
    void aBlockWhoseParentTheEngineNoLongerHoldsIsFoundTheSlowerWay() {
        long[] chain = {1, 2, 3, 4};
        index.store(7, 0, StorageTier.DEVICE, false, 0, chain, chain);
        index.store(8, 0, StorageTier.DEVICE, false, 0, chain, chain);
        index.remove(7, 0, StorageTier.DEVICE, new long[] {2});
        Owner o = index.owners.find(7, 0);
        assertNull(index.tree.heldFromBranches(o), "block 3 hangs under a block engine 7 no longer holds");
        assertArrayEquals(new long[] {1, 3, 4}, hashesOf(index.tree.heldByScan(o), o));
        index.removeWorker(7);
        assertTrue(index.matchOwners(chain, null).toList().stream().allMatch(m -> m.workerId() == 8));
    }

    /** A conversation on the system prompt: a branch of the prompt's last block, then blocks laid out after it. */
    private void converse(long worker, int blocks) {
        long[] c = rnd.longs(blocks).toArray();
        conversations.add(c);
        index.store(worker, 0, StorageTier.DEVICE, true, SYSTEM[1], c, c);
    }

    private long[] hashesOf(IntArrayList nodes, Owner o) {
        return Arrays.stream(sorted(nodes))
                .mapToLong(n -> index.tree.hashOf(n, o.id))
                .sorted()
                .toArray();
    }

    private static int[] sorted(IntArrayList nodes) {
        int[] a = nodes.toIntArray();
        Arrays.sort(a);
        return a;
    }
}
