package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.Arrays;

/**
 * The owners holding each device node, as one int per node (its tag in {@link NodeRecords}): most blocks have a single holder, so its id is the whole
 * set, and only a node with several holders takes a bitset word from a shared pool. Owner ids at or above 64 (a
 * partition with that many (worker, dp_rank) owners) keep their further words in an array per pool entry, found by
 * the entry's index: a fleet of a thousand engines reads them at every holder test, so no hash look-up stands there,
 * and a partition of fewer owners allocates none of it.
 *
 * <p>Tag of a node: {@code 0} no holder; {@code v > 0} the single holder {@code v - 1}; {@code v < 0} the set in pool
 * entry {@code -v - 1}.
 */
final class NodeHolders {
    private final NodeRecords tags;
    /** Word 0 of each pooled set. */
    private final LongColumn pool = new LongColumn();
    /** Words 1.. of pooled sets that hold an owner id of 64 or more, by pool entry, in segments made when needed. */
    private long[][][] highWords = new long[0][][];
    /** Segments of {@link #highWords} made, and the heap the words' arrays take. */
    private int highSegments;

    private long highBytes;

    private static final int HIGH_SEGMENT_SHIFT = 10;
    private static final int HIGH_SEGMENT_MASK = (1 << HIGH_SEGMENT_SHIFT) - 1;
    private static final long HIGH_SEGMENT_BYTES = 16L + 4L * (HIGH_SEGMENT_MASK + 1);

    private final IntArrayList freeEntries = new IntArrayList();
    private int poolEntries;

    NodeHolders(NodeRecords nodes) {
        this.tags = nodes;
    }

    /** Word 0 of a node's set: the walk's test for up to 64 owners. */
    long word0(int node) {
        int v = tags.tag(node);
        if (v > 0) {
            return v <= 64 ? 1L << (v - 1) : 0L;
        }
        return v == 0 ? 0L : pool.get(-v - 1);
    }

    long word(int node, int w) {
        int v = tags.tag(node);
        if (v > 0) {
            int id = v - 1;
            return id >>> 6 == w ? 1L << id : 0L;
        }
        if (v == 0) {
            return 0L;
        }
        int entry = -v - 1;
        if (w == 0) {
            return pool.get(entry);
        }
        long[] high = high(entry);
        return high != null && w - 1 < high.length ? high[w - 1] : 0L;
    }

    /**
     * Words {@code 0 .. words - 1} of a node's set into {@code into}, each ANDed with {@code from}'s when it is not
     * null; answers how many owners that leaves. One look-up of the side map for the whole set, where {@link #word}
     * makes one a word.
     */
    int wordsInto(int node, long[] from, long[] into, int words) {
        int v = tags.tag(node);
        long[] high = v < 0 ? high(-v - 1) : null;
        int count = 0;
        for (int w = 0; w < words; w++) {
            long bits;
            if (v > 0) {
                bits = (v - 1) >>> 6 == w ? 1L << (v - 1) : 0L;
            } else if (v == 0) {
                bits = 0L;
            } else if (w == 0) {
                bits = pool.get(-v - 1);
            } else {
                bits = high != null && w - 1 < high.length ? high[w - 1] : 0L;
            }
            if (from != null) {
                bits &= from[w];
            }
            into[w] = bits;
            count += Long.bitCount(bits);
        }
        return count;
    }

    /** Number of words that may be non-zero. */
    int wordCount(int node) {
        int v = tags.tag(node);
        if (v > 0) {
            return ((v - 1) >>> 6) + 1;
        }
        if (v == 0) {
            return 1;
        }
        long[] high = high(-v - 1);
        return high == null ? 1 : high.length + 1;
    }

    boolean isEmpty(int node) {
        return tags.tag(node) == 0;
    }

    boolean has(int node, int id) {
        return (word(node, id >>> 6) & (1L << id)) != 0;
    }

    void add(int node, int id) {
        int v = tags.tag(node);
        if (v == 0) {
            tags.setTag(node, id + 1);
        } else if (v > 0) {
            if (v - 1 != id) {
                int entry = newEntry();
                setBit(entry, v - 1);
                setBit(entry, id);
                tags.setTag(node, -entry - 1);
            }
        } else {
            setBit(-v - 1, id);
        }
    }

    void remove(int node, int id) {
        int v = tags.tag(node);
        if (v > 0) {
            if (v - 1 == id) {
                tags.setTag(node, 0);
            }
            return;
        }
        if (v == 0) {
            return;
        }
        int entry = -v - 1;
        clearBit(entry, id);
        if (countOf(entry) < 2) {
            // Back to a single holder (or none): the pool entry is returned.
            int[] left = idsOf(entry, 1);
            tags.setTag(node, left.length == 0 ? 0 : left[0] + 1);
            pool.set(entry, 0L);
            setHigh(entry, null);
            freeEntries.add(entry);
        }
    }

    int count(int node) {
        int v = tags.tag(node);
        if (v >= 0) {
            return v == 0 ? 0 : 1;
        }
        return countOf(-v - 1);
    }

    private int countOf(int entry) {
        int n = Long.bitCount(pool.get(entry));
        long[] high = high(entry);
        if (high != null) {
            for (long word : high) {
                n += Long.bitCount(word);
            }
        }
        return n;
    }

    /** Owner ids in ascending order. */
    int[] ids(int node) {
        int v = tags.tag(node);
        if (v >= 0) {
            return v == 0 ? new int[0] : new int[] {v - 1};
        }
        return idsOf(-v - 1, Integer.MAX_VALUE);
    }

    /** Heap held by the holder sets beyond the tags, in bytes. */
    long bytes() {
        return pool.bytes()
                - 8L * freeEntries.size()
                + 16L
                + 4L * highWords.length
                + HIGH_SEGMENT_BYTES * highSegments
                + highBytes
                + 4L * freeEntries.elements().length;
    }

    /** Up to {@code limit} ids of a pooled set, ascending. */
    private int[] idsOf(int entry, int limit) {
        long[] high = high(entry);
        int words = high == null ? 1 : high.length + 1;
        int[] out = new int[Math.min(limit, 64 * words)];
        int n = 0;
        for (int w = 0; w < words && n < limit; w++) {
            long bits = w == 0 ? pool.get(entry) : high[w - 1];
            while (bits != 0 && n < limit) {
                out[n++] = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    private long[] high(int entry) {
        int segment = entry >>> HIGH_SEGMENT_SHIFT;
        long[][][] all = highWords;
        if (segment >= all.length) {
            return null;
        }
        long[][] words = all[segment];
        return words == null ? null : words[entry & HIGH_SEGMENT_MASK];
    }

    private void setHigh(int entry, long[] high) {
        int segment = entry >>> HIGH_SEGMENT_SHIFT;
        if (segment >= highWords.length) {
            if (high == null) {
                return;
            }
            highWords = Arrays.copyOf(highWords, Math.max(segment + 1, 2 * highWords.length));
        }
        if (highWords[segment] == null) {
            if (high == null) {
                return;
            }
            highWords[segment] = new long[HIGH_SEGMENT_MASK + 1][];
            highSegments++;
        }
        long[] old = highWords[segment][entry & HIGH_SEGMENT_MASK];
        if (old != null) {
            highBytes -= arrayBytes(old);
        }
        if (high != null) {
            highBytes += arrayBytes(high);
        }
        highWords[segment][entry & HIGH_SEGMENT_MASK] = high;
    }

    private static long arrayBytes(long[] words) {
        return 16L + 8L * words.length;
    }

    private int newEntry() {
        if (!freeEntries.isEmpty()) {
            return freeEntries.popInt();
        }
        int entry = poolEntries++;
        pool.ensure(poolEntries);
        return entry;
    }

    private void setBit(int entry, int id) {
        if (id < 64) {
            pool.set(entry, pool.get(entry) | 1L << id);
            return;
        }
        int w = (id >>> 6) - 1;
        long[] high = high(entry);
        if (high == null || high.length <= w) {
            high = high == null ? new long[w + 1] : Arrays.copyOf(high, w + 1);
            setHigh(entry, high);
        }
        high[w] |= 1L << id;
    }

    private void clearBit(int entry, int id) {
        if (id < 64) {
            pool.set(entry, pool.get(entry) & ~(1L << id));
            return;
        }
        long[] high = high(entry);
        int w = (id >>> 6) - 1;
        if (high != null && w < high.length) {
            high[w] &= ~(1L << id);
        }
    }
}
