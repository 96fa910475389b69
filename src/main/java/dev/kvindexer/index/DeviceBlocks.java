package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * One owner's device blocks that the tree's shared engine-hash table does not lead to (another engine hash for a
 * block, or the same hash at another position), engine hash → node id, and the reference counts of all its device
 * hashes, and the branch nodes it came to hold.
 */
final class DeviceBlocks {
    static final int NONE = -1;

    final Long2IntOpenHashMap byHash = new Long2IntOpenHashMap();
    final CopyCounts copies = new CopyCounts();
    /** Device blocks the owner holds, listed here or not. */
    int blocks;
    /**
     * Nodes it came to hold that are a branch of their parent (not the child laid out right after it), so that what
     * it holds is found from these and the root without looking at other owners' branches. Leaving a node leaves its
     * entry: stale entries are dropped once they outnumber the blocks held.
     */
    final IntArrayList branches = new IntArrayList(0);

    DeviceBlocks() {
        byHash.defaultReturnValue(NONE);
    }

    long bytes() {
        int listed = branches.elements().length;
        return HeapSizes.openHashMap(byHash.size(), 12) + copies.bytes() + (listed == 0 ? 0 : 16 + 4L * listed);
    }

    void clear() {
        byHash.clear();
        byHash.trim();
        copies.clear();
        branches.clear();
        branches.trim();
        blocks = 0;
    }
}
