package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.LocalHashes;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A token query hashes its prompt as the walk reaches each block: the answer is the one of every hash computed first,
 * and a tail nobody holds is not hashed past its first block, unless a walk that needs the whole prompt runs.
 */
class LazyMatchTest {
    private static final int BLOCK = 4;
    private static final long SEED = BlockHasher.BASE_SEED;

    private final SplittableRandom rnd = new SplittableRandom(17);
    private final int[] held = rnd.ints(10 * BLOCK, 0, 50_000).toArray();
    private final long[] heldHashes = BlockHasher.localHashes(held, BLOCK, SEED);

    /** Engine hashes as an engine's: the same content hashes the same on every engine. */
    private static long engine(long local) {
        return local * 31 + 7;
    }

    private static void store(PartitionIndex index, long worker, StorageTier tier, int from, int to, long[] locals) {
        long[] mine = Arrays.copyOfRange(locals, from, to);
        long[] engines = Arrays.stream(mine).map(LazyMatchTest::engine).toArray();
        index.store(worker, 0, tier, from > 0, from > 0 ? engine(locals[from - 1]) : 0, engines, mine);
    }

    /** The held prompt's first {@code shared} blocks, then tokens of its own up to {@code blocks} blocks. */
    private int[] sharingFirst(int shared, int blocks) {
        int[] prompt = rnd.ints(blocks * BLOCK, 50_000, 100_000).toArray();
        System.arraycopy(held, 0, prompt, 0, shared * BLOCK);
        return prompt;
    }

    private static void assertSameAnswer(PartitionIndex index, int[] prompt, PartitionIndex.Reach lazy) {
        long[] all = BlockHasher.localHashes(prompt, BLOCK, SEED);
        assertEquals(index.matchOwners(all, null).toList(), lazy.matches().toList());
        assertArrayEquals(index.sharedReach(all, null), lazy.sharedReach());
    }

    @Test
    void aTailNobodyHoldsIsHashedOnlyToItsFirstBlock() {
        PartitionIndex index = new PartitionIndex(BLOCK);
        store(index, 1, StorageTier.DEVICE, 0, 6, heldHashes);
        store(index, 2, StorageTier.DEVICE, 0, 3, heldHashes);
        store(index, 2, StorageTier.HOST_PINNED, 3, 6, heldHashes);
        int[] prompt = sharingFirst(6, 20);

        LocalHashes hashes = LocalHashes.ofTokens(prompt, BLOCK, SEED);
        PartitionIndex.Reach reach = index.matchLazily(hashes);

        assertSameAnswer(index, prompt, reach);
        assertEquals(7, hashes.computed(), "the six held blocks and the first one nobody holds");
        assertEquals(2, reach.matches().size());
    }

    @Test
    void aWideStartAndItsKeptAnswerHashAsLittle() {
        PartitionIndex index = new PartitionIndex(BLOCK);
        for (long w = 1; w <= WideAnswers.WIDE_OWNERS + 44; w++) {
            store(index, w, StorageTier.DEVICE, 0, 5, heldHashes);
        }
        store(index, 9, StorageTier.DEVICE, 5, 7, heldHashes);
        for (int round = 0; round < 3; round++) {
            int[] prompt = sharingFirst(8, 30);
            LocalHashes hashes = LocalHashes.ofTokens(prompt, BLOCK, SEED);
            PartitionIndex.Reach reach = index.matchLazily(hashes);
            assertSameAnswer(index, prompt, reach);
            assertEquals(8, hashes.computed(), "round " + round + ": seven held blocks and one more");
        }
    }

    @Test
    void aSharedStoreOrBlocksStoredWithoutTokensTakeTheWholePrompt() {
        PartitionIndex index = new PartitionIndex(BLOCK);
        store(index, 1, StorageTier.DEVICE, 0, 4, heldHashes);
        store(index, 50, StorageTier.HOST_PINNED, 0, 6, heldHashes);
        index.markSharedStore(50, true);
        int[] prompt = sharingFirst(6, 12);

        LocalHashes hashes = LocalHashes.ofTokens(prompt, BLOCK, SEED);
        PartitionIndex.Reach reach = index.matchLazily(hashes);

        assertSameAnswer(index, prompt, reach);
        assertEquals(12, hashes.computed());
        assertTrue(reach.sharedReach()[0] > 0, "the store's CPU blocks reach past the engine's");
    }
}
