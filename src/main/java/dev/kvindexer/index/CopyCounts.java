package dev.kvindexer.index;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * Reference counts of one owner's engine hashes in one tier beyond the first copy. Counts above one are rare, so the
 * map stays null until one is needed; a hash without an entry has exactly one copy.
 */
final class CopyCounts {
    private Long2IntOpenHashMap extra;

    void addCopy(long hash) {
        if (extra == null) {
            extra = new Long2IntOpenHashMap();
        }
        extra.addTo(hash, 1);
    }

    /** Drops one copy of a held hash; true when that was the last copy (the caller then forgets it). */
    boolean dropCopy(long hash) {
        Long2IntOpenHashMap e = extra;
        if (e == null || e.isEmpty()) {
            return true;
        }
        int more = e.get(hash);
        if (more == 0) {
            return true;
        }
        if (more == 1) {
            e.remove(hash);
        } else {
            e.put(hash, more - 1);
        }
        return false;
    }

    /** Back to a single copy (the hash was re-homed). */
    void reset(long hash) {
        if (extra != null && !extra.isEmpty()) {
            extra.remove(hash);
        }
    }

    /** Copies of a hash the caller knows is held. */
    int ofHeld(long hash) {
        return extra == null ? 1 : 1 + extra.get(hash);
    }

    long bytes() {
        return extra == null ? 0 : HeapSizes.openHashMap(extra.size(), 12);
    }

    void clear() {
        extra = null;
    }
}
