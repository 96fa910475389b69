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
    private static final int NONE = -1;
    /** Parent of a free id, so that no adjacency test matches it. */
    private static final int FREE = -2;
    /** How far down a free run an allocation looks for the run's start. */
    private static final int RUN_SCAN = 64;

    final NodeRecords records = new NodeRecords(FREE);
    final NodeHolders holders = new NodeHolders(records);
    private final Branches branches = new Branches(records);
    private final IntConsumer detach = c -> records.setParent(c, NO_PARENT);
    /**
     * Freed ids, oldest first, as a doubly linked list threaded through the free nodes' local-hash entries (previous
     * id in the high half, next in the low half), so any free id can be taken in constant time.
     */
    private int freeHead = NONE;
    private int freeTail = NONE;
    private int freeCount;
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

    /** Frees an emptied node: it leaves its parent, and its children become detached subtrees (SPEC §6.3). */
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
        records.setLocal(node, links(freeTail, NONE));
        if (freeTail == NONE) {
            freeHead = node;
        } else {
            records.setLocal(freeTail, links(previousFree(freeTail), node));
        }
        freeTail = node;
        freeCount++;
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
        return limit - 1 - freeCount;
    }

    /** One past the highest id ever handed out. */
    int idLimit() {
        return limit;
    }

    /** Heap held for live nodes: the records less those of free ids, which new nodes take first. */
    long bytes() {
        return records.bytes() - (long) NodeRecords.BYTES * freeCount + holders.bytes() + branches.bytes();
    }

    private int allocate(int wanted) {
        if (wanted == limit && limit < maxIds) {
            return grow();
        }
        if (wanted < limit && records.parent(wanted) == FREE) {
            takeFree(wanted);
            return wanted;
        }
        if (freeHead == NONE) {
            if (limit >= maxIds) {
                throw new IllegalStateException("no free node id: the tree makes room before it stores");
            }
            return grow();
        }
        // Start at the lowest id of the oldest free run, so the chain that follows takes the run's next ids: leaves
        // are evicted from the end of a chain up, so a run's ids are freed highest first.
        int id = freeHead;
        for (int k = 0; k < RUN_SCAN && records.parent(id - 1) == FREE; k++) {
            id--;
        }
        takeFree(id);
        return id;
    }

    private void takeFree(int id) {
        freeCount--;
        int prev = previousFree(id);
        int next = nextFree(id);
        if (prev == NONE) {
            freeHead = next;
        } else {
            records.setLocal(prev, links(previousFree(prev), next));
        }
        if (next == NONE) {
            freeTail = prev;
        } else {
            records.setLocal(next, links(prev, nextFree(next)));
        }
    }

    private int previousFree(int id) {
        return (int) (records.local(id) >> 32);
    }

    private int nextFree(int id) {
        return (int) records.local(id);
    }

    private static long links(int prev, int next) {
        return (long) prev << 32 | (next & 0xFFFFFFFFL);
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
