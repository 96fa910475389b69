package dev.kvindexer.index;

import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

/** One owner's blocks in one lower tier: engine hash → the edge it is held on, with a reference count per hash. */
final class LowerTierBlocks<T> {
    final Long2ObjectOpenHashMap<T> byHash = new Long2ObjectOpenHashMap<>();
    final CopyCounts copies = new CopyCounts();

    int copies(long hash) {
        return byHash.containsKey(hash) ? copies.ofHeld(hash) : 0;
    }

    int size() {
        return byHash.size();
    }

    long bytes() {
        return HeapSizes.openHashMap(byHash.size(), 12) + copies.bytes();
    }

    void clear() {
        byHash.clear();
        byHash.trim();
        copies.clear();
    }
}
