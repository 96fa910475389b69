package dev.kvindexer.hash;

import java.util.Arrays;
import net.openhft.hashing.LongHashFunction;

/**
 * A prompt's local block hashes (docs/protocol/hashing.md#local-block-hash), each computed when a walk first asks for
 * it: a walk stops at the first block nobody holds, so a prompt whose tail is its own costs the hashes of its held
 * blocks and one more, not of all its blocks. Hashes a client sent are all known from the start. Read by one thread at
 * a time (the query's, or the partition actor's it was handed to).
 */
public final class LocalHashes {
    private static final long[] NONE = new long[0];

    /** The prompt's tokens, or null when every hash was given. */
    private final int[] tokens;

    private final int blockSize;
    private final LongHashFunction fn;
    private final long[] values;
    /** Hashes computed so far: those of blocks {@code 0 .. known-1}. */
    private int known;

    private LocalHashes(int[] tokens, int blockSize, LongHashFunction fn, long[] values, int known) {
        this.tokens = tokens;
        this.blockSize = blockSize;
        this.fn = fn;
        this.values = values;
        this.known = known;
    }

    /** Hashes already computed, such as a client's {@code block_hashes}; the array is read, never written. */
    public static LocalHashes of(long[] hashes) {
        return new LocalHashes(null, 0, null, hashes, hashes.length);
    }

    /**
     * The hashes of {@code tokens}' complete blocks under {@code seed}, none computed yet; the partial trailing block
     * has none, as in {@link BlockHasher#localHashes(int[], int, long)}. The tokens must not change meanwhile.
     */
    public static LocalHashes ofTokens(int[] tokens, int blockSize, long seed) {
        return ofTokens(tokens, tokens.length, blockSize, seed);
    }

    /** As {@link #ofTokens(int[], int, long)} over the first {@code length} tokens of a reused buffer. */
    public static LocalHashes ofTokens(int[] tokens, int length, int blockSize, long seed) {
        if (blockSize <= 0 || length < blockSize) {
            return of(NONE);
        }
        return new LocalHashes(tokens, blockSize, BlockHasher.function(seed), new long[length / blockSize], 0);
    }

    /** Complete blocks in the prompt. */
    public int length() {
        return values.length;
    }

    /** The hash of block {@code i}, {@code 0 <= i < length()}, computed with those before it if not yet. */
    public long at(int i) {
        return i < known ? values[i] : computeThrough(i);
    }

    private long computeThrough(int i) {
        if (i >= values.length) {
            throw new IndexOutOfBoundsException("block " + i + " of a prompt of " + values.length);
        }
        for (int b = known; b <= i; b++) {
            values[b] = BlockHasher.hashTokens(fn, tokens, b * blockSize, blockSize);
        }
        known = i + 1;
        return values[i];
    }

    /** How many hashes have been computed or given so far. */
    public int computed() {
        return known;
    }

    /** Every hash, computing the rest: for a caller that needs the whole prompt. Read it, never write it. */
    public long[] toArray() {
        if (known < values.length) {
            computeThrough(values.length - 1);
        }
        return values;
    }

    /** The first {@code n} blocks' hashes, as a prompt of their own. */
    public LocalHashes head(int n) {
        if (n > 0) {
            at(n - 1);
        }
        return of(Arrays.copyOf(values, n));
    }
}
