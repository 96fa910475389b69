package dev.kvindexer.sim;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Endless, seeded prompts with realistic sharing: each starts with one of a few shared "system prompts", then a
 * random user part; some continue an earlier conversation (its whole prompt plus a new turn), which shares deeper
 * prefixes. Lengths are not block multiples, so partial tail blocks occur.
 */
public final class SyntheticPrompts implements PromptSource {
    public static final int VOCAB = 32_000;
    private static final double CONTINUE_PROBABILITY = 0.25;
    private static final int REMEMBERED = 32;

    private final SplittableRandom rnd;
    private final int blockSize;
    private final int maxSuffixBlocks;
    private final int maxBlocks;
    private final int[][] systemPrompts;
    private final int[][] recent = new int[REMEMBERED][];
    private int recentCount;

    /**
     * @param prefixes        number of distinct shared prefixes
     * @param prefixBlocks    length of each shared prefix in blocks
     * @param maxSuffixBlocks a new turn adds 1..this many blocks (plus a partial block)
     * @param maxBlocks       conversations longer than this start over
     */
    public SyntheticPrompts(
            long seed, int blockSize, int prefixes, int prefixBlocks, int maxSuffixBlocks, int maxBlocks) {
        if (blockSize <= 0 || prefixes <= 0 || prefixBlocks < 0 || maxSuffixBlocks <= 0) {
            throw new IllegalArgumentException("invalid synthetic prompt shape");
        }
        this.rnd = new SplittableRandom(seed);
        this.blockSize = blockSize;
        this.maxSuffixBlocks = maxSuffixBlocks;
        this.maxBlocks = maxBlocks;
        this.systemPrompts = new int[prefixes][];
        for (int i = 0; i < prefixes; i++) {
            systemPrompts[i] = randomTokens(prefixBlocks * blockSize);
        }
    }

    /** Defaults for a demo: 8 shared prefixes of 4 blocks, turns of up to 8 blocks, conversations up to 64 blocks. */
    public static SyntheticPrompts standard(long seed, int blockSize) {
        return new SyntheticPrompts(seed, blockSize, 8, 4, 8, 64);
    }

    @Override
    public int[] next() {
        int[] base;
        if (recentCount > 0 && rnd.nextDouble() < CONTINUE_PROBABILITY) {
            base = recent[rnd.nextInt(Math.min(recentCount, REMEMBERED))];
            if (base.length / blockSize + maxSuffixBlocks > maxBlocks) {
                base = systemPrompts[rnd.nextInt(systemPrompts.length)];
            }
        } else {
            base = systemPrompts[rnd.nextInt(systemPrompts.length)];
        }
        int[] turn = randomTokens((1 + rnd.nextInt(maxSuffixBlocks)) * blockSize + rnd.nextInt(blockSize));
        int[] prompt = Arrays.copyOf(base, base.length + turn.length);
        System.arraycopy(turn, 0, prompt, base.length, turn.length);
        recent[recentCount++ % REMEMBERED] = prompt;
        return prompt;
    }

    private int[] randomTokens(int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = rnd.nextInt(VOCAB);
        }
        return t;
    }
}
