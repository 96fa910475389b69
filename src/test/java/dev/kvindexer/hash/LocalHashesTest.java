package dev.kvindexer.hash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Hashes computed on demand are the eager ones, each computed once and only when asked for. */
class LocalHashesTest {
    @Test
    void onDemandHashesAreTheEagerOnesForEverySeedBlockSizeAndLength() {
        SplittableRandom rnd = new SplittableRandom(5);
        long[] seeds = {BlockHasher.BASE_SEED, BlockHasher.seedFor("adapter", null), BlockHasher.seedFor(null, "salt")};
        for (int blockSize : new int[] {1, 4, 16, 512}) {
            for (int length : new int[] {0, blockSize - 1, blockSize, 3 * blockSize + 1, 40 * blockSize}) {
                int[] tokens = rnd.ints(length, 0, 150_000).toArray();
                for (long seed : seeds) {
                    long[] eager = BlockHasher.localHashes(tokens, blockSize, seed);
                    LocalHashes lazy = LocalHashes.ofTokens(tokens, blockSize, seed);
                    assertEquals(eager.length, lazy.length(), "blocks of " + length + " tokens at " + blockSize);
                    // Out of order on purpose: a later block first computes those before it.
                    for (int i = eager.length - 1; i >= 0; i -= 3) {
                        assertEquals(eager[i], lazy.at(i), "block " + i);
                    }
                    assertArrayEquals(eager, lazy.toArray());
                }
            }
        }
    }

    @Test
    void onlyTheBlocksAskedForAndThoseBeforeThemAreHashed() {
        int[] tokens = new SplittableRandom(9).ints(100 * 16, 0, 32_000).toArray();
        LocalHashes lazy = LocalHashes.ofTokens(tokens, 16, BlockHasher.BASE_SEED);
        assertEquals(0, lazy.computed());
        lazy.at(0);
        assertEquals(1, lazy.computed());
        lazy.at(6);
        assertEquals(7, lazy.computed());
        lazy.at(2);
        assertEquals(7, lazy.computed());
        LocalHashes head = lazy.head(9);
        assertEquals(9, lazy.computed());
        assertArrayEquals(Arrays.copyOf(BlockHasher.localHashes(tokens, 16, BlockHasher.BASE_SEED), 9), head.toArray());
        assertEquals(100, lazy.toArray().length);
        assertEquals(100, lazy.computed());
        assertThrows(IndexOutOfBoundsException.class, () -> lazy.at(100));
    }

    @Test
    void aReusedBufferIsReadOnlyUpToItsLength() {
        int[] buffer = new SplittableRandom(3).ints(64, 0, 1000).toArray();
        LocalHashes lazy = LocalHashes.ofTokens(buffer, 37, 8, BlockHasher.BASE_SEED);
        assertArrayEquals(BlockHasher.localHashes(Arrays.copyOf(buffer, 37), 8, BlockHasher.BASE_SEED), lazy.toArray());
    }

    @Test
    void givenHashesAreAllKnown() {
        long[] given = {7, 8, 9};
        LocalHashes known = LocalHashes.of(given);
        assertEquals(3, known.computed());
        assertEquals(8, known.at(1));
        assertEquals(given, known.toArray());
    }
}
