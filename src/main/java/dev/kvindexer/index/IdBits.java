package dev.kvindexer.index;

import java.util.Arrays;

/** A growable set of ids as a plain bitset: no bookkeeping on clear, unlike {@link java.util.BitSet}. */
final class IdBits {
    private long[] words = new long[16];

    boolean get(int id) {
        int w = id >>> 6;
        return w < words.length && (words[w] & (1L << id)) != 0;
    }

    void set(int id) {
        int w = id >>> 6;
        if (w >= words.length) {
            words = Arrays.copyOf(words, Math.max(w + 1, words.length * 2));
        }
        words[w] |= 1L << id;
    }

    void clear(int id) {
        int w = id >>> 6;
        if (w < words.length) {
            words[w] &= ~(1L << id);
        }
    }

    /** The first id at or after {@code from} in the set, or -1. */
    int next(int from) {
        int w = from >>> 6;
        if (w >= words.length) {
            return -1;
        }
        long b = words[w] & (-1L << from);
        while (b == 0) {
            if (++w == words.length) {
                return -1;
            }
            b = words[w];
        }
        return (w << 6) + Long.numberOfTrailingZeros(b);
    }

    long bytes() {
        return 16 + 8L * words.length;
    }
}
