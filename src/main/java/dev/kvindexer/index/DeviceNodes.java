package dev.kvindexer.index;

import java.util.function.IntConsumer;

/**
 * The device tree's nodes addressed by int id ({@link NodeRecords}, {@link NodeHolders}), with no object per node, and
 * the parent/child relation between them. A child created under its parent takes the id after the parent's when it is
 * free, which is the usual case down a stored chain, so a walk down the chain reads consecutive records; other children
 * are {@link Branches}. Ids of emptied nodes are reused.
 */
final class DeviceNodes {
    static final int ROOT = 0;
    /** Parent of the root and of detached nodes. */
    static final int NO_PARENT = -1;
    /** Parent of a free id, so that no adjacency test matches it. */
    private static final int FREE = -2;
    /** How far down a free run an allocation looks for the run's start. */
    private static final int RUN_SCAN = 64;

    final NodeRecords records = new NodeRecords(FREE);
    final NodeHolders holders = new NodeHolders(records);
    private final Branches branches = new Branches(records);
    private final IntConsumer detach = c -> records.setParent(c, NO_PARENT);
    private final FreeIds free = new FreeIds();
    /** Where the search for a free id resumes: ids are reused in sweeps from low to high. */
    private int cursor = 1;
    /** Ids below this have been handed out at least once. */
    private int limit;
    /** Ids the engine-hash table can name: the root and at most this many minus one nodes. */
    private final int maxIds;

    DeviceNodes(int maxNodes) {
        this.maxIds = maxNodes + 1;
        ensure(1);
        records.setParent(ROOT, NO_PARENT);
        limit = 1;
    }

    int parent(int node) {
        return records.parent(node);
    }

    long local(int node) {
        return records.local(node);
    }

    long engine(int node) {
        return records.engine(node);
    }

    /** The child of {@code p} at a local hash, or -1. */
    int child(int p, long localHash) {
        int next = p + 1;
        if (next < limit && records.parent(next) == p && records.local(next) == localHash) {
            return next;
        }
        return branches.get(p, localHash);
    }

    /** A new node under {@code p}, placed at {@code p + 1} when that id is free. */
    int create(int p, long localHash, long engineHash) {
        int id = allocate(p + 1);
        records.setLocal(id, localHash);
        records.setEngine(id, engineHash);
        records.setParent(id, p);
        if (id != p + 1) {
            branches.add(p, id);
        }
        return id;
    }

    /**
     * Frees an emptied node: it leaves its parent, and its children become detached subtrees
     * (docs/protocol/index.md#remove).
     */
    void release(int node) {
        int p = records.parent(node);
        if (p >= 0 && node != p + 1) {
            branches.remove(p, node);
        }
        int next = node + 1;
        if (next < limit && records.parent(next) == node) {
            records.setParent(next, NO_PARENT);
        }
        branches.removeAll(node, detach);
        records.setParent(node, FREE);
        free.add(node);
    }

    void forEachChild(int p, IntConsumer action) {
        int next = p + 1;
        if (next < limit && records.parent(next) == p) {
            action.accept(next);
        }
        branches.forEach(p, action);
    }

    int childCount(int p) {
        int next = p + 1;
        return (next < limit && records.parent(next) == p ? 1 : 0) + branches.count(p);
    }

    boolean isLive(int node) {
        return records.parent(node) != FREE;
    }

    /** Nodes in use, the root not counted. */
    int liveCount() {
        return limit - 1 - free.size();
    }

    /** One past the highest id ever handed out. */
    int idLimit() {
        return limit;
    }

    /** Heap held for live nodes: the records less those of free ids, which new nodes take first. */
    long bytes() {
        return records.bytes()
                - (long) NodeRecords.BYTES * free.size()
                + holders.bytes()
                + branches.bytes()
                + free.bytes();
    }

    private int allocate(int wanted) {
        if (wanted == limit && limit < maxIds) {
            return grow();
        }
        if (wanted < limit && free.contains(wanted)) {
            free.remove(wanted);
            return wanted;
        }
        if (free.size() == 0) {
            if (limit >= maxIds) {
                throw new IllegalStateException("no free node id: the tree makes room before it stores");
            }
            return grow();
        }
        int id = free.next(cursor);
        if (id < 0) {
            id = free.next(1);
        }
        // Start at the lowest id of the free run, so the chain that follows takes the run's next ids: leaves are
        // evicted from the end of a chain up, and a run may have been freed behind the sweep.
        for (int k = 0; k < RUN_SCAN && free.contains(id - 1); k++) {
            id--;
        }
        free.remove(id);
        cursor = id + 1;
        return id;
    }

    private int grow() {
        int id = limit++;
        ensure(limit);
        return id;
    }

    private void ensure(int n) {
        records.ensure(n);
    }
}
