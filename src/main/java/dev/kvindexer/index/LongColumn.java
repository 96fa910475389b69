package dev.kvindexer.index;

import java.util.Arrays;

/**
 * A growable column of longs addressed by node id, in fixed-size slabs: growing never copies a slab, and at most
 * one slab is partly unused, so the column costs its width per id and nothing more.
 */
final class LongColumn {
    static final int SHIFT = 14;
    static final int SLAB = 1 << SHIFT;
    static final int MASK = SLAB - 1;

    private long[][] slabs = new long[8][];
    private int slabCount;

    long get(int i) {
        return slabs[i >>> SHIFT][i & MASK];
    }

    void set(int i, long v) {
        slabs[i >>> SHIFT][i & MASK] = v;
    }

    /** Makes ids below {@code n} addressable; new entries read 0. */
    void ensure(int n) {
        while ((long) slabCount << SHIFT < n) {
            if (slabCount == slabs.length) {
                slabs = Arrays.copyOf(slabs, slabCount * 2);
            }
            slabs[slabCount++] = new long[SLAB];
        }
    }

    /** Heap held by the column, in bytes (slab arrays with their headers, and the slab table). */
    long bytes() {
        return (long) slabCount * (SLAB * 8L + 16) + 16 + 8L * slabs.length;
    }
}
