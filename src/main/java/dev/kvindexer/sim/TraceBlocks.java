package dev.kvindexer.sim;

import java.util.SplittableRandom;

/**
 * Maps a trace's hash_ids to tokens: block id k becomes {@code traceBlockSize} tokens drawn from a PRNG seeded by
 * (seed, k). Mooncake trace ids already name a whole prefix (an id never appears under two different prefixes), so
 * equal ids give equal tokens and equal (id, prefix) give equal prompts.
 */
public final class TraceBlocks {
    public static final int MOONCAKE_BLOCK_SIZE = 512;

    private final long seed;
    private final int traceBlockSize;

    public TraceBlocks(long seed, int traceBlockSize) {
        if (traceBlockSize <= 0) {
            throw new IllegalArgumentException("trace block size must be positive");
        }
        this.seed = seed;
        this.traceBlockSize = traceBlockSize;
    }

    public int traceBlockSize() {
        return traceBlockSize;
    }

    /** The tokens of one trace block. */
    public int[] block(long hashId) {
        SplittableRandom rnd = new SplittableRandom(seed ^ (hashId * 0x9E3779B97F4A7C15L));
        int[] out = new int[traceBlockSize];
        for (int i = 0; i < out.length; i++) {
            out[i] = rnd.nextInt(SyntheticPrompts.VOCAB);
        }
        return out;
    }

    /**
     * The prompt of a trace line: its blocks in order, cut to {@code inputLength} tokens (the last trace block is
     * usually partial). Never longer than the blocks provide.
     */
    public int[] prompt(long[] hashIds, int inputLength) {
        int length = (int) Math.min((long) hashIds.length * traceBlockSize, Math.max(inputLength, 0));
        int[] out = new int[length];
        for (int b = 0; b * traceBlockSize < length; b++) {
            int[] tokens = block(hashIds[b]);
            System.arraycopy(tokens, 0, out, b * traceBlockSize, Math.min(traceBlockSize, length - b * traceBlockSize));
        }
        return out;
    }
}
