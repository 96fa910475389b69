package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.kvindexer.event.StorageTier;
import org.junit.jupiter.api.Test;

/** An owner's engine hashes along a prompt, the names a KV fetch hint gives its blocks. */
class EngineChainTest {
    private static final long[] PROMPT = {1, 2, 3, 4, 5};

    @Test
    void eachOwnerIsNamedByItsOwnHashesOverTheDeviceAndHostPinnedReach() {
        PartitionIndex index = new PartitionIndex(4);
        index.store(7, 0, StorageTier.DEVICE, false, 0, new long[] {101, 102}, new long[] {1, 2});
        index.store(7, 0, StorageTier.HOST_PINNED, true, 102, new long[] {103}, new long[] {3});
        index.store(7, 0, StorageTier.DISK, true, 103, new long[] {104}, new long[] {4});
        // The same blocks under other engine hashes: one device node, two names.
        index.store(8, 0, StorageTier.DEVICE, false, 0, new long[] {201, 202, 203}, new long[] {1, 2, 3});
        index.store(9, 0, StorageTier.HOST_PINNED, false, 0, new long[] {301}, new long[] {1});

        assertArrayEquals(new long[] {101, 102, 103}, index.engineHashes(7, 0, PROMPT, 5), "disk is beyond the reach");
        assertArrayEquals(new long[] {201, 202, 203}, index.engineHashes(8, 0, PROMPT, 5));
        assertArrayEquals(new long[] {201, 202}, index.engineHashes(8, 0, PROMPT, 2), "at most the blocks asked for");
        assertArrayEquals(new long[] {301}, index.engineHashes(9, 0, PROMPT, 5), "host pinned from the first block");
        assertArrayEquals(new long[0], index.engineHashes(7, 1, PROMPT, 5), "an owner the index does not know");
        assertArrayEquals(new long[0], index.engineHashes(7, 0, new long[] {9, 1}, 5), "the prompt's first block");
    }
}
