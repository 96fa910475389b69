package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2IntMap;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.Arrays;
import java.util.function.IntConsumer;

/**
 * The device-tree children that do not sit at their parent's id + 1 ({@link DeviceNodes}): the first block of each
 * prompt under the root or under a shared prefix, and blocks stored one at a time while other chains were growing.
 * A parent's entry in an int column names its one branch, or says that it has a map of them by local hash. The column
 * is kept in slabs allocated on a slab's first branching parent, so ids laid out as unbranched chains pay nothing.
 */
final class Branches {
    private static final int NONE = -1;
    /** Column entry of a parent whose branches are in {@link #many}. */
    private static final int MANY = -2;

    private static final int SHIFT = 12;
    private static final int SLAB = 1 << SHIFT;
    private static final int MASK = SLAB - 1;

    private final NodeRecords nodes;
    private int[][] first = new int[8][];
    private int firstSlabs;
    private final Int2ObjectOpenHashMap<Long2IntOpenHashMap> many = new Int2ObjectOpenHashMap<>();
    /** Entries over all maps of {@link #many}. */
    private long manyEntries;

    Branches(NodeRecords nodes) {
        this.nodes = nodes;
    }

    int get(int parent, long local) {
        int f = entry(parent);
        if (f >= 0) {
            return nodes.local(f) == local ? f : NONE;
        }
        return f == NONE ? NONE : many.get(parent).get(local);
    }

    void add(int parent, int child) {
        int[] slab = slabFor(parent);
        int k = parent & MASK;
        int f = slab[k];
        if (f == NONE) {
            slab[k] = child;
        } else if (f == MANY) {
            if (many.get(parent).put(nodes.local(child), child) == NONE) {
                manyEntries++;
            }
        } else if (f != child) {
            Long2IntOpenHashMap m = new Long2IntOpenHashMap(4);
            m.defaultReturnValue(NONE);
            m.put(nodes.local(f), f);
            m.put(nodes.local(child), child);
            many.put(parent, m);
            slab[k] = MANY;
            manyEntries += 2;
        }
    }

    void remove(int parent, int child) {
        int f = entry(parent);
        if (f == child) {
            clear(parent);
        } else if (f == MANY) {
            Long2IntOpenHashMap m = many.get(parent);
            // A parent that had several branches keeps its map down to the last one: branch points see churn.
            if (m.remove(nodes.local(child), child)) {
                manyEntries--;
                if (m.isEmpty()) {
                    many.remove(parent);
                    clear(parent);
                }
            }
        }
    }

    /** Forgets every branch of a parent, handing each child to {@code action} first. */
    void removeAll(int parent, IntConsumer action) {
        int f = entry(parent);
        if (f == NONE) {
            return;
        }
        clear(parent);
        if (f >= 0) {
            action.accept(f);
            return;
        }
        Long2IntOpenHashMap m = many.remove(parent);
        manyEntries -= m.size();
        m.values().forEach(action);
    }

    void forEach(int parent, IntConsumer action) {
        int f = entry(parent);
        if (f >= 0) {
            action.accept(f);
        } else if (f == MANY) {
            for (Long2IntMap.Entry e : many.get(parent).long2IntEntrySet()) {
                action.accept(e.getIntValue());
            }
        }
    }

    int count(int parent) {
        int f = entry(parent);
        return f == NONE ? 0 : f >= 0 ? 1 : many.get(parent).size();
    }

    long bytes() {
        return (long) firstSlabs * (4L * SLAB + 16)
                + 16
                + 8L * first.length
                + HeapSizes.openHashMap(many.size(), 8)
                + many.size() * HeapSizes.MAP_OVERHEAD
                + HeapSizes.openHashMap(manyEntries, 12);
    }

    private int entry(int parent) {
        int s = parent >>> SHIFT;
        if (s >= first.length) {
            return NONE;
        }
        int[] slab = first[s];
        return slab == null ? NONE : slab[parent & MASK];
    }

    private void clear(int parent) {
        first[parent >>> SHIFT][parent & MASK] = NONE;
    }

    private int[] slabFor(int parent) {
        int s = parent >>> SHIFT;
        if (s >= first.length) {
            first = Arrays.copyOf(first, Math.max(s + 1, first.length * 2));
        }
        int[] slab = first[s];
        if (slab == null) {
            slab = new int[SLAB];
            Arrays.fill(slab, NONE);
            first[s] = slab;
            firstSlabs++;
        }
        return slab;
    }
}
