package dev.kvindexer.index;

import java.util.Arrays;

/**
 * The device-tree nodes' fields, addressed by int id: local hash, engine hash, and one word holding the parent id and
 * the holder tag ({@link NodeHolders}). A node's three words sit side by side in a slab of longs, so reading a node
 * costs one cache line as an object would, without the object's header and references; slabs have a fixed size, so
 * growing never copies and leaves at most one slab partly unused.
 */
final class NodeRecords implements KeyColumn {
    private static final int SHIFT = 12;
    private static final int SLAB = 1 << SHIFT;
    private static final int MASK = SLAB - 1;
    private static final int STRIDE = 3;
    /** Bytes of one node's record. */
    static final int BYTES = 8 * STRIDE;

    private static final long TAG_BITS = 0xFFFFFFFFL;

    private final long emptyLinks;
    private long[][] slabs = new long[8][];
    private int slabCount;

    /** New ids read {@code initialParent} as their parent and 0 as their tag. */
    NodeRecords(int initialParent) {
        this.emptyLinks = (long) initialParent << 32;
    }

    long local(int id) {
        return slabs[id >>> SHIFT][(id & MASK) * STRIDE];
    }

    long engine(int id) {
        return slabs[id >>> SHIFT][(id & MASK) * STRIDE + 1];
    }

    /** The engine hash: the key the tree's {@link IdsByKey} lists a node under. */
    @Override
    public long key(int id) {
        return engine(id);
    }

    int parent(int id) {
        return (int) (slabs[id >>> SHIFT][(id & MASK) * STRIDE + 2] >> 32);
    }

    int tag(int id) {
        return (int) slabs[id >>> SHIFT][(id & MASK) * STRIDE + 2];
    }

    void setLocal(int id, long v) {
        slabs[id >>> SHIFT][(id & MASK) * STRIDE] = v;
    }

    void setEngine(int id, long v) {
        slabs[id >>> SHIFT][(id & MASK) * STRIDE + 1] = v;
    }

    void setParent(int id, int parent) {
        long[] s = slabs[id >>> SHIFT];
        int k = (id & MASK) * STRIDE + 2;
        s[k] = (long) parent << 32 | (s[k] & TAG_BITS);
    }

    void setTag(int id, int tag) {
        long[] s = slabs[id >>> SHIFT];
        int k = (id & MASK) * STRIDE + 2;
        s[k] = (s[k] & ~TAG_BITS) | (tag & TAG_BITS);
    }

    /** Makes ids below {@code n} addressable. */
    void ensure(int n) {
        while ((long) slabCount << SHIFT < n) {
            if (slabCount == slabs.length) {
                slabs = Arrays.copyOf(slabs, slabCount * 2);
            }
            long[] slab = new long[SLAB * STRIDE];
            for (int k = 2; k < slab.length; k += STRIDE) {
                slab[k] = emptyLinks;
            }
            slabs[slabCount++] = slab;
        }
    }

    /** Heap held by the records, in bytes (slab arrays with their headers, and the slab table). */
    long bytes() {
        return (long) slabCount * (SLAB * STRIDE * 8L + 16) + 16 + 8L * slabs.length;
    }
}
