package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.event.StorageTier;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A prompt given as its engine's block hashes is matched as the same prompt given as local hashes: through the
 * device tree, on into host memory, from a first block held only in host memory, and never from a block that is not
 * the prompt's first.
 */
class EnginePathTest {
    private static final long[] LOCAL = {101, 102, 103, 104};
    private static final long[] ENGINE = {-1, -2, -3, -4};

    @Test
    void deviceThenHostBlocksGiveTheLocalPath() {
        PartitionIndex index = new PartitionIndex(16);
        index.store(7, 0, StorageTier.DEVICE, false, 0, new long[] {-1, -2}, new long[] {101, 102});
        index.store(7, 0, StorageTier.HOST_PINNED, true, -2, new long[] {-3}, new long[] {103});
        assertArrayEquals(new long[] {101, 102, 103}, index.localHashesOfEngineHashes(ENGINE));
        assertEquals(index.match(new long[] {101, 102, 103}), index.match(index.localHashesOfEngineHashes(ENGINE)));
    }

    @Test
    void aFirstBlockHeldOnlyInHostMemoryStartsThePath() {
        PartitionIndex index = new PartitionIndex(16);
        index.store(8, 0, StorageTier.HOST_PINNED, false, 0, new long[] {-1, -2}, new long[] {101, 102});
        assertArrayEquals(new long[] {101, 102}, index.localHashesOfEngineHashes(ENGINE));
        List<OwnerMatch> m = index.match(index.localHashesOfEngineHashes(ENGINE));
        assertEquals(List.of(new OwnerMatch(8, 0, 0, 2, 2)), m);
    }

    @Test
    void aPromptThatDoesNotStartAtItsFirstBlockMatchesNothing() {
        PartitionIndex index = new PartitionIndex(16);
        index.store(7, 0, StorageTier.DEVICE, false, 0, ENGINE, LOCAL);
        assertArrayEquals(new long[0], index.localHashesOfEngineHashes(new long[] {-2, -3}));
        assertArrayEquals(new long[] {101}, index.localHashesOfEngineHashes(new long[] {-1, -3}));
        assertArrayEquals(new long[0], index.localHashesOfEngineHashes(new long[] {}));
    }

    @Test
    void aRemovedBlockEndsThePath() {
        PartitionIndex index = new PartitionIndex(16);
        index.store(7, 0, StorageTier.DEVICE, false, 0, ENGINE, LOCAL);
        index.remove(7, 0, StorageTier.DEVICE, new long[] {-3, -4});
        assertArrayEquals(new long[] {101, 102}, index.localHashesOfEngineHashes(ENGINE));
        index.remove(7, 0, StorageTier.DEVICE, new long[] {-1, -2});
        assertArrayEquals(new long[0], index.localHashesOfEngineHashes(ENGINE));
    }
}
