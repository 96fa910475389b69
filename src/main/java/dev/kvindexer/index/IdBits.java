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
        cover(id);
        words[id >>> 6] |= 1L << id;
    }

    /**
     * {@link #set} for threads that read the index at once (a query's recency mark), while no change runs: growing is
     * serialised, and a mark written into an array another reader has just replaced is lost, as is a mark two readers
     * set in one word at once. A mark is only a hint to eviction; the changes that read it come after the readers'
     * lock, which publishes the array.
     */
    void setShared(int id) {
        int w = id >>> 6;
        long[] a = words;
        if (w >= a.length) {
            synchronized (this) {
                cover(id);
                a = words;
            }
        }
        a[w] |= 1L << id;
    }

    private void cover(int id) {
        int w = id >>> 6;
        if (w >= words.length) {
            words = Arrays.copyOf(words, Math.max(w + 1, words.length * 2));
        }
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
