package dev.kvindexer.index;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * One owner's device blocks that the tree's shared engine-hash table does not lead to (another engine hash for a
 * block, or the same hash at another position), engine hash → node id, and the reference counts of all its device
 * hashes.
 */
final class DeviceBlocks {
    static final int NONE = -1;

    final Long2IntOpenHashMap byHash = new Long2IntOpenHashMap();
    final CopyCounts copies = new CopyCounts();
    /** Device blocks the owner holds, listed here or not. */
    int blocks;

    DeviceBlocks() {
        byHash.defaultReturnValue(NONE);
    }

    long bytes() {
        return HeapSizes.openHashMap(byHash.size(), 12) + copies.bytes();
    }

    void clear() {
        byHash.clear();
        byHash.trim();
        copies.clear();
        blocks = 0;
    }
}
