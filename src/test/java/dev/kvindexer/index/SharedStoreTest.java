package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Mooncake Store publishers as shared store owners (docs/protocol/events.md#mooncake-store-events,
 * docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown): their CPU and disk blocks extend every
 * owner's
 * walk after its own GPU prefix, per rank, never back up a tier; they are never an entry themselves. The prompt is
 * the worked example of docs/protocol/index.md#tier-semantics-compared: blocks H1, H2, H3 (local hashes 1, 2, 3; engine
 * hashes 100, 200, 300).
 */
class SharedStoreTest {
    private static final long ENGINE = 7;
    private static final long STORE = 50;
    private static final long[] PROMPT = {1, 2, 3};

    private PartitionIndex index;

    @BeforeEach
    void setUp() {
        index = new PartitionIndex(2);
        index.markSharedStore(STORE, true);
    }

    private StoreOutcome store(long worker, int rank, StorageTier tier, Long parent, long... locals) {
        long[] hashes = new long[locals.length];
        for (int i = 0; i < locals.length; i++) {
            hashes[i] = locals[i] * 100;
        }
        return index.store(worker, rank, tier, parent != null, parent == null ? 0 : parent, hashes, locals);
    }

    private Map<Integer, OwnerMatch> byRank(List<OwnerMatch> matches) {
        Map<Integer, OwnerMatch> out = new HashMap<>();
        for (OwnerMatch m : matches) {
            assertTrue(m.workerId() != STORE, "a store is never an entry: " + m);
            out.put(m.dpRank(), m);
        }
        return out;
    }

    /**
     * The worked example (docs/protocol/index.md#tier-semantics-compared): H1 on GPU (dp0, dp1); H2 on GPU (dp0); the
     * store holds H1, H2 in CPU and H1, H3 on disk.
     */
    private void workedExample() {
        store(ENGINE, 0, StorageTier.DEVICE, null, 1, 2);
        store(ENGINE, 1, StorageTier.DEVICE, null, 1);
        store(STORE, 0, StorageTier.HOST_PINNED, null, 1, 2);
        store(STORE, 0, StorageTier.DISK, null, 1);
        store(STORE, 0, StorageTier.DISK, 200L, 3);
    }

    @Test
    void theStoreExtendsEachRankAfterItsOwnGpuPrefixAsTheConductorDoes() {
        workedExample();
        Map<Integer, OwnerMatch> m = byRank(index.match(PROMPT));
        // rank_matches of docs/protocol/index.md#tier-semantics-compared in blocks: dp0 {gpu 2, cpu 2, disk 3}, dp1
        // {gpu 1, cpu 2, disk 3}.
        assertEquals(new OwnerMatch(ENGINE, 0, 2, 2, 3), m.get(0));
        assertEquals(new OwnerMatch(ENGINE, 1, 1, 2, 3), m.get(1), "the walk goes on in CPU, then disk, never back");
        assertEquals(2, m.size());
    }

    @Test
    void differentRanksNeverAddUpToOnePrefix() {
        store(ENGINE, 0, StorageTier.DEVICE, null, 1);
        store(ENGINE, 1, StorageTier.DEVICE, null, 9);
        store(ENGINE, 1, StorageTier.DEVICE, 900L, 2);
        Map<Integer, OwnerMatch> m = byRank(index.match(PROMPT));
        assertEquals(new OwnerMatch(ENGINE, 0, 1, 1, 1), m.get(0));
        assertEquals(1, m.size(), "rank 1 holds H2 under another parent: it never continues rank 0's prefix");
    }

    @Test
    void aRankWithNothingOfItsOwnGetsTheStoresReachFromTheRoot() {
        workedExample();
        assertArrayEquals(new int[] {2, 3}, index.sharedReach(PROMPT));
        assertArrayEquals(new int[] {0, 0}, index.sharedReach(new long[] {2, 3}), "only a prefix from the first block");
        PartitionIndex diskOnly = new PartitionIndex(2);
        diskOnly.markSharedStore(STORE, true);
        diskOnly.store(STORE, 0, StorageTier.DISK, false, 0, new long[] {100}, new long[] {1});
        assertArrayEquals(new int[] {0, 1}, diskOnly.sharedReach(PROMPT), "disk only: cpu 0, disk 1");
    }

    @Test
    void withoutAStoreTheSameBlocksOfAnotherEngineDoNotExtendAnyone() {
        PartitionIndex plain = new PartitionIndex(2);
        plain.store(ENGINE, 0, StorageTier.DEVICE, false, 0, new long[] {100}, new long[] {1});
        plain.store(8, 0, StorageTier.HOST_PINNED, false, 0, new long[] {100, 200}, new long[] {1, 2});
        Map<Long, OwnerMatch> m = new HashMap<>();
        plain.match(PROMPT).forEach(o -> m.put(o.workerId(), o));
        assertEquals(new OwnerMatch(ENGINE, 0, 1, 1, 1), m.get(ENGINE), "another engine's CPU blocks are its own");
        assertEquals(new OwnerMatch(8, 0, 0, 2, 2), m.get(8L));
        assertArrayEquals(new int[] {0, 0}, plain.sharedReach(PROMPT));
    }

    @Test
    void aStoresDeviceBlocksAreRefusedAndItsRemovalShrinksEveryonesReach() {
        workedExample();
        assertEquals(StoreOutcome.STORE_DEVICE_TIER, store(STORE, 0, StorageTier.DEVICE, null, 1));
        assertEquals(0, index.heldBlocks(STORE, 0, StorageTier.DEVICE));

        index.remove(STORE, 0, StorageTier.DISK, new long[] {300});
        assertEquals(
                new OwnerMatch(ENGINE, 0, 2, 2, 2), byRank(index.match(PROMPT)).get(0));
        index.removeWorker(STORE);
        index.markSharedStore(STORE, false);
        assertEquals(
                new OwnerMatch(ENGINE, 1, 1, 1, 1), byRank(index.match(PROMPT)).get(1));
        assertArrayEquals(new int[] {0, 0}, index.sharedReach(PROMPT));
    }

    @Test
    void rollingSequenceHashesFindTheSameBlocksAsLocalHashesInEveryTier() {
        workedExample();
        long[] seq = dev.kvindexer.hash.BlockHasher.sequenceHashes(PROMPT);
        assertArrayEquals(PROMPT, index.localHashesOfSequence(seq), "device H1, H2, then H3 on the store's disk");
        assertEquals(
                new java.util.HashSet<>(index.match(PROMPT)),
                new java.util.HashSet<>(index.match(index.localHashesOfSequence(seq))));
        long[] diverging = dev.kvindexer.hash.BlockHasher.sequenceHashes(new long[] {1, 2, 4});
        assertArrayEquals(new long[] {1, 2}, index.localHashesOfSequence(diverging), "stops where the prefix ends");
        assertArrayEquals(new long[0], index.localHashesOfSequence(new long[] {2, 3}), "a prefix starts at the root");

        PartitionIndex diskOnly = new PartitionIndex(2);
        diskOnly.store(9, 0, StorageTier.DISK, false, 0, new long[] {100, 200}, new long[] {1, 2});
        assertArrayEquals(new long[] {1, 2}, diskOnly.localHashesOfSequence(seq), "a prefix held only on disk");
    }

    @Test
    void gpuNeverExceedsCpuNorCpuDisk() {
        workedExample();
        store(ENGINE, 2, StorageTier.HOST_PINNED, null, 1);
        for (OwnerMatch m : index.match(PROMPT)) {
            assertTrue(m.gpuBlocks() <= m.cpuBlocks() && m.cpuBlocks() <= m.diskBlocks(), m.toString());
            assertTrue(m.diskBlocks() <= PROMPT.length, m.toString());
        }
    }
}
