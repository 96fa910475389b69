package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2IntMap;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.function.IntConsumer;

/**
 * The device-tree children that do not sit at their parent's id + 1 ({@link DeviceNodes}): the first block of each
 * prompt under the root or under a shared prefix, and blocks stored one at a time while other chains were growing.
 * A parent with one such child maps straight to it; a parent with several keeps a map by local hash.
 */
final class Branches {
    private static final int NONE = -1;

    private final NodeRecords nodes;
    private final Int2IntOpenHashMap single = new Int2IntOpenHashMap();
    private final Int2ObjectOpenHashMap<Long2IntOpenHashMap> many = new Int2ObjectOpenHashMap<>();
    /** Parents with at least one branch: most nodes have none, and a bit answers that without a map probe. */
    private final IdBits parents = new IdBits();
    /** Entries over all maps of {@link #many}. */
    private long manyEntries;

    Branches(NodeRecords nodes) {
        this.nodes = nodes;
        single.defaultReturnValue(NONE);
    }

    int get(int parent, long local) {
        if (!parents.get(parent)) {
            return NONE;
        }
        int only = single.get(parent);
        if (only != NONE) {
            return nodes.local(only) == local ? only : NONE;
        }
        Long2IntOpenHashMap m = many.get(parent);
        return m == null ? NONE : m.get(local);
    }

    void add(int parent, int child) {
        if (!parents.get(parent)) {
            parents.set(parent);
            single.put(parent, child);
            return;
        }
        long local = nodes.local(child);
        Long2IntOpenHashMap m = many.get(parent);
        if (m != null) {
            if (m.put(local, child) == NONE) {
                manyEntries++;
            }
            return;
        }
        int only = single.putIfAbsent(parent, child);
        if (only != NONE) {
            m = new Long2IntOpenHashMap(4);
            m.defaultReturnValue(NONE);
            m.put(nodes.local(only), only);
            m.put(local, child);
            single.remove(parent);
            many.put(parent, m);
            manyEntries += 2;
        }
    }

    void remove(int parent, int child) {
        int only = single.remove(parent);
        if (only == child) {
            parents.clear(parent);
            return;
        }
        if (only != NONE) {
            single.put(parent, only); // the parent's one branch is another child: nothing to remove
            return;
        }
        Long2IntOpenHashMap m = many.get(parent);
        // A parent that had several branches keeps its map down to the last one: branch points see churn.
        if (m != null && m.remove(nodes.local(child), child)) {
            manyEntries--;
            if (m.isEmpty()) {
                many.remove(parent);
                parents.clear(parent);
            }
        }
    }

    /** Forgets every branch of a parent, handing each child to {@code action} first. */
    void removeAll(int parent, IntConsumer action) {
        if (!parents.get(parent)) {
            return;
        }
        parents.clear(parent);
        int only = single.remove(parent);
        if (only != NONE) {
            action.accept(only);
            return;
        }
        Long2IntOpenHashMap m = many.remove(parent);
        if (m != null) {
            manyEntries -= m.size();
            m.values().forEach(action);
        }
    }

    void forEach(int parent, IntConsumer action) {
        if (!parents.get(parent)) {
            return;
        }
        int only = single.get(parent);
        if (only != NONE) {
            action.accept(only);
            return;
        }
        Long2IntOpenHashMap m = many.get(parent);
        if (m != null) {
            for (Long2IntMap.Entry e : m.long2IntEntrySet()) {
                action.accept(e.getIntValue());
            }
        }
    }

    int count(int parent) {
        if (!parents.get(parent)) {
            return 0;
        }
        if (single.get(parent) != NONE) {
            return 1;
        }
        Long2IntOpenHashMap m = many.get(parent);
        return m == null ? 0 : m.size();
    }

    long bytes() {
        return HeapSizes.openHashMap(single.size(), 8) + HeapSizes.openHashMap(many.size(), 8)
                + many.size() * HeapSizes.MAP_OVERHEAD + HeapSizes.openHashMap(manyEntries, 12) + parents.bytes();
    }
}
