package dev.kvindexer.index;

/**
 * A set of dense owner ids as a bitset: word 0 inline (partitions rarely have more than 64 owners), the
 * rest allocated on demand. Base of tree nodes and lower-tier edges so their holder tests stay one AND.
 */
abstract class HolderSet {
    long bits0;
    long[] bitsHigh; // word i+1; null until an owner id >= 64 holds this

    final void addHolder(int id) {
        if (id < 64) {
            bits0 |= 1L << id;
            return;
        }
        int w = (id >>> 6) - 1;
        long[] high = bitsHigh;
        if (high == null || high.length <= w) {
            long[] grown = new long[w + 1];
            if (high != null) {
                System.arraycopy(high, 0, grown, 0, high.length);
            }
            bitsHigh = high = grown;
        }
        high[w] |= 1L << id;
    }

    final void removeHolder(int id) {
        if (id < 64) {
            bits0 &= ~(1L << id);
            return;
        }
        int w = (id >>> 6) - 1;
        long[] high = bitsHigh;
        if (high != null && w < high.length) {
            high[w] &= ~(1L << id);
        }
    }

    final boolean hasHolder(int id) {
        if (id < 64) {
            return (bits0 & (1L << id)) != 0;
        }
        int w = (id >>> 6) - 1;
        long[] high = bitsHigh;
        return high != null && w < high.length && (high[w] & (1L << id)) != 0;
    }

    final boolean hasNoHolder() {
        if (bits0 != 0) {
            return false;
        }
        long[] high = bitsHigh;
        if (high != null) {
            for (long word : high) {
                if (word != 0) {
                    return false;
                }
            }
        }
        return true;
    }

    final int holderCount() {
        int n = Long.bitCount(bits0);
        if (bitsHigh != null) {
            for (long word : bitsHigh) {
                n += Long.bitCount(word);
            }
        }
        return n;
    }

    /** Word {@code i} of the set (0 beyond the allocated words). */
    final long word(int i) {
        if (i == 0) {
            return bits0;
        }
        long[] high = bitsHigh;
        return high != null && i - 1 < high.length ? high[i - 1] : 0L;
    }

    /** Number of words that may be non-zero. */
    final int wordCount() {
        return bitsHigh == null ? 1 : bitsHigh.length + 1;
    }

    /** Owner ids in ascending order. */
    final int[] holderIds() {
        int[] ids = new int[holderCount()];
        int n = 0;
        int words = wordCount();
        for (int w = 0; w < words; w++) {
            long bits = word(w);
            while (bits != 0) {
                ids[n++] = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
            }
        }
        return ids;
    }
}
