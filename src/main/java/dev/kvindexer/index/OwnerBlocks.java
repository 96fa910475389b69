package dev.kvindexer.index;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

/**
 * One owner's blocks in one tier: engine hash → where it is held, with a reference count per hash.
 * Counts above one are rare, so they live in a side map that stays null until needed.
 */
final class OwnerBlocks<T> {
    final Long2ObjectOpenHashMap<T> byHash = new Long2ObjectOpenHashMap<>();
    private Long2IntOpenHashMap extraCopies; // copies beyond the first

    void addCopy(long hash) {
        if (extraCopies == null) {
            extraCopies = new Long2IntOpenHashMap();
        }
        extraCopies.addTo(hash, 1);
    }

    /** Drops one copy of a held hash; true when that was the last copy (the caller then forgets it). */
    boolean dropCopy(long hash) {
        Long2IntOpenHashMap extra = extraCopies;
        if (extra == null || extra.isEmpty()) {
            return true;
        }
        int more = extra.get(hash);
        if (more == 0) {
            return true;
        }
        if (more == 1) {
            extra.remove(hash);
        } else {
            extra.put(hash, more - 1);
        }
        return false;
    }

    /** Back to a single copy (the hash was re-homed). */
    void resetCopies(long hash) {
        if (extraCopies != null && !extraCopies.isEmpty()) {
            extraCopies.remove(hash);
        }
    }

    int copies(long hash) {
        return byHash.containsKey(hash) ? copiesOfHeld(hash) : 0;
    }

    /** Copies of a hash the caller knows is held. */
    int copiesOfHeld(long hash) {
        return extraCopies == null ? 1 : 1 + extraCopies.get(hash);
    }

    int size() {
        return byHash.size();
    }

    void clear() {
        byHash.clear();
        byHash.trim();
        extraCopies = null;
    }
}
