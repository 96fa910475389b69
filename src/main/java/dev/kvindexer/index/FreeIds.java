package dev.kvindexer.index;

import java.util.Arrays;

/**
 * A set of free node ids with the next member at or after an id found in a few word reads however sparse the set is:
 * a bitset of ids under three summary levels, each with a bit per non-empty word of the level below. Taking and
 * freeing touch only these words, never the records of other free ids.
 */
final class FreeIds {
    private static final int LEVELS = 4;

    private final long[][] levels = new long[LEVELS][];
    private int size;

    FreeIds() {
        for (int k = 0; k < LEVELS; k++) {
            levels[k] = new long[1];
        }
    }

    int size() {
        return size;
    }

    boolean contains(int id) {
        long[] bits = levels[0];
        int w = id >>> 6;
        return w < bits.length && (bits[w] & (1L << id)) != 0;
    }

    void add(int id) {
        ensure(id);
        size++;
        for (int k = 0, i = id; k < LEVELS; k++, i >>>= 6) {
            long[] bits = levels[k];
            int w = i >>> 6;
            long before = bits[w];
            bits[w] = before | 1L << i;
            if (before != 0) {
                return;
            }
        }
    }

    /** Removes a member. */
    void remove(int id) {
        size--;
        for (int k = 0, i = id; k < LEVELS; k++, i >>>= 6) {
            long[] bits = levels[k];
            int w = i >>> 6;
            long after = bits[w] & ~(1L << i);
            bits[w] = after;
            if (after != 0) {
                return;
            }
        }
    }

    /** The lowest member at or after {@code from}, or -1. */
    int next(int from) {
        int k = 0;
        long pos = from;
        while (true) {
            long[] bits = levels[k];
            long w = pos >>> 6;
            if (w >= bits.length) {
                return -1;
            }
            long b = bits[(int) w] & (-1L << pos);
            if (k == LEVELS - 1) {
                while (b == 0) {
                    if (++w == bits.length) {
                        return -1;
                    }
                    b = bits[(int) w];
                }
            }
            if (b != 0) {
                pos = (w << 6) + Long.numberOfTrailingZeros(b);
                break;
            }
            pos = w + 1;
            k++;
        }
        while (k > 0) {
            k--;
            pos = (pos << 6) + Long.numberOfTrailingZeros(levels[k][(int) pos]);
        }
        return (int) pos;
    }

    long bytes() {
        long total = 16 + 8L * LEVELS;
        for (long[] bits : levels) {
            total += 16 + 8L * bits.length;
        }
        return total;
    }

    private void ensure(int id) {
        for (int k = 0, i = id; k < LEVELS; k++, i >>>= 6) {
            int w = i >>> 6;
            if (w >= levels[k].length) {
                levels[k] = Arrays.copyOf(levels[k], Math.max(w + 1, levels[k].length * 2));
            }
        }
    }
}
