package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.LocalHashes;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One non-device tier of a partition (docs/protocol/index.md#lower-tiers): edges keyed by (parent engine hash or none,
 * local hash).
 */
final class LowerTierIndex {
    final StorageTier tier;
    final int slot;
    private final Long2ObjectOpenHashMap<LowerEdge> rootEdges = new Long2ObjectOpenHashMap<>();
    private final Long2ObjectOpenHashMap<LowerEdge> byParent = new Long2ObjectOpenHashMap<>();
    private int edgeCount;
    private long conflicts;
    /** Edges oldest first, for eviction; edges dropped since are skipped, and compacted away when they pile up. */
    private final ArrayDeque<LowerEdge> byAge = new ArrayDeque<>();

    private long evicted;

    private final OwnerTable owners;

    LowerTierIndex(StorageTier tier, OwnerTable owners) {
        this.tier = tier;
        this.owners = owners;
        this.slot = LowerTiers.slot(tier);
    }

    LowerEdge find(boolean hasParent, long parentHash, long localHash) {
        if (!hasParent) {
            return rootEdges.get(localHash);
        }
        for (LowerEdge e = byParent.get(parentHash); e != null; e = e.nextSibling) {
            if (e.localHash == localHash) {
                return e;
            }
        }
        return null;
    }

    private LowerEdge create(boolean hasParent, long parentHash, long localHash, long childHash) {
        LowerEdge e = new LowerEdge(hasParent, parentHash, localHash, childHash);
        if (hasParent) {
            e.nextSibling = byParent.put(parentHash, e);
        } else {
            rootEdges.put(localHash, e);
        }
        edgeCount++;
        byAge.addLast(e);
        if (byAge.size() > 2 * edgeCount + 1024) {
            byAge.removeIf(LowerEdge::hasNoHolder);
        }
        return e;
    }

    private void drop(LowerEdge e) {
        if (!e.hasParent) {
            rootEdges.remove(e.localHash);
        } else {
            LowerEdge head = byParent.get(e.parentHash);
            if (head == e) {
                if (e.nextSibling == null) {
                    byParent.remove(e.parentHash);
                } else {
                    byParent.put(e.parentHash, e.nextSibling);
                }
            } else {
                for (LowerEdge p = head; p != null; p = p.nextSibling) {
                    if (p.nextSibling == e) {
                        p.nextSibling = e.nextSibling;
                        break;
                    }
                }
            }
        }
        edgeCount--;
    }

    /**
     * A lower-tier store (docs/protocol/index.md#lower-tiers); a block whose edge exists with another child hash
     * rejects the rest of the chain.
     */
    void store(Owner o, boolean hasParent, long parentHash, long[] blockHashes, long[] localHashes) {
        LowerTierBlocks<LowerEdge> held = o.lower(slot);
        boolean hasPrev = hasParent;
        long prev = parentHash;
        for (int i = 0; i < blockHashes.length; i++) {
            long h = blockHashes[i];
            LowerEdge e = find(hasPrev, prev, localHashes[i]);
            if (e == null) {
                e = create(hasPrev, prev, localHashes[i], h);
            } else if (e.childHash != h) {
                conflicts++;
                return;
            }
            LowerEdge before = held.byHash.putIfAbsent(h, e);
            if (before == e) {
                held.copies.addCopy(h);
            } else {
                if (before != null) {
                    // The same engine hash under another parent: the owner's block moved.
                    release(o, before);
                    held.byHash.put(h, e);
                    held.copies.reset(h);
                }
                e.addHolder(o.id);
            }
            hasPrev = true;
            prev = h;
        }
    }

    /** Returns the number of hashes the owner did not hold in this tier. */
    int remove(Owner o, long[] blockHashes) {
        LowerTierBlocks<LowerEdge> held = o.lowerIfAny(slot);
        if (held == null) {
            return blockHashes.length;
        }
        int missing = 0;
        for (long h : blockHashes) {
            LowerEdge e = held.byHash.get(h);
            if (e == null) {
                missing++;
            } else if (held.copies.dropCopy(h)) {
                held.byHash.remove(h);
                release(o, e);
            }
        }
        return missing;
    }

    void clearOwner(Owner o) {
        LowerTierBlocks<LowerEdge> held = o.lowerIfAny(slot);
        if (held == null) {
            return;
        }
        for (LowerEdge e : held.byHash.values()) {
            release(o, e);
        }
        held.clear();
    }

    private void release(Owner o, LowerEdge e) {
        e.removeHolder(o.id);
        if (e.hasNoHolder()) {
            drop(e);
        }
    }

    /** No owner of its own: only shared store owners count ({@link #extendShared}). */
    private static final int NO_OWNER = -1;

    /**
     * How many blocks owner {@code id} extends from {@code L[pos]} on, starting after the given engine
     * hash (docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown inner loop): edges it holds
     * itself or a shared store owner holds. {@code out[0]} receives the
     * last engine hash reached.
     */
    int extend(int id, boolean hasLast, long last, LocalHashes localHashes, int pos, long[] lastOut) {
        return walk(id, hasLast, last, localHashes, pos, localHashes.length(), lastOut, null);
    }

    /**
     * The walk of {@link #extend} up to {@code end}, writing the engine hash of each block reached at its position in
     * {@code chain}; returns how many it wrote.
     */
    int chain(int id, boolean hasLast, long last, long[] localHashes, int pos, int end, long[] chain) {
        return walk(id, hasLast, last, LocalHashes.of(localHashes), pos, end, new long[1], chain);
    }

    private int walk(
            int id,
            boolean hasLast,
            long last,
            LocalHashes localHashes,
            int pos,
            int end,
            long[] lastOut,
            long[] chain) {
        int k = 0;
        while (pos + k < end) {
            LowerEdge e = find(hasLast, last, localHashes.at(pos + k));
            if (e == null || !((id != NO_OWNER && e.hasHolder(id)) || sharedOwnerPresent(e))) {
                break;
            }
            last = e.childHash;
            hasLast = true;
            if (chain != null) {
                chain[pos + k] = last;
            }
            k++;
        }
        lastOut[0] = last;
        return k;
    }

    /** The reach of an owner that holds nothing of its own: what the shared store owners alone extend. */
    int extendShared(boolean hasLast, long last, LocalHashes localHashes, int pos, long[] lastOut) {
        return extend(NO_OWNER, hasLast, last, localHashes, pos, lastOut);
    }

    /**
     * Whether a shared store owner holds the edge
     * (docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown): a Mooncake Store of the partition
     * holds the edge.
     */
    private boolean sharedOwnerPresent(LowerEdge e) {
        return owners.heldByStore(e);
    }

    /** The first edge under a parent engine hash; the others follow through {@link LowerEdge#nextSibling}. */
    LowerEdge firstChildOf(long parentHash) {
        return byParent.get(parentHash);
    }

    LowerEdge rootEdge(long localHash) {
        return rootEdges.get(localHash);
    }

    void forEachEdge(Consumer<LowerEdge> action) {
        rootEdges.values().forEach(action);
        for (LowerEdge head : byParent.values()) {
            for (LowerEdge e = head; e != null; e = e.nextSibling) {
                action.accept(e);
            }
        }
    }

    /** Heap held by the tier's edges, their two maps and the age queue (object sizes as HotSpot lays them out). */
    long bytes() {
        return 56L * edgeCount
                + HeapSizes.openHashMap(rootEdges.size(), 12)
                + HeapSizes.openHashMap(byParent.size(), 12)
                + 8L * byAge.size();
    }

    /**
     * Evicts up to {@code max} edges, the oldest first and each from the leaves up: below the oldest edge, the first
     * child is followed down to an edge with none, and that path is evicted upwards while each edge on it is left
     * childless. Every holder forgets an evicted edge. Returns how many, 0 when no edge is left.
     */
    int evictOldest(int max) {
        int n = 0;
        List<LowerEdge> path = new ArrayList<>();
        while (n < max && !byAge.isEmpty()) {
            LowerEdge oldest = byAge.peekFirst();
            if (oldest.hasNoHolder()) {
                byAge.pollFirst(); // dropped by a remove, a clear or this eviction
                continue;
            }
            path.clear();
            path.add(oldest);
            // Bounded, so that hashes chained into a cycle cannot hold the walk: its last edge goes regardless.
            for (LowerEdge c;
                    path.size() <= edgeCount && (c = byParent.get(path.get(path.size() - 1).childHash)) != null; ) {
                path.add(c);
            }
            for (int i = path.size() - 1; i >= 0 && n < max; i--) {
                LowerEdge e = path.get(i);
                if (e.hasNoHolder()) {
                    continue; // met twice on a cycle
                }
                if (i < path.size() - 1 && byParent.containsKey(e.childHash)) {
                    break;
                }
                evict(e);
                n++;
            }
        }
        evicted += n;
        return n;
    }

    private void evict(LowerEdge e) {
        for (int id : e.holderIds()) {
            Owner o = owners.byIdToChange(id);
            LowerTierBlocks<LowerEdge> held = o.lowerIfAny(slot);
            if (held != null && held.byHash.remove(e.childHash, e)) {
                held.copies.reset(e.childHash);
            }
            release(o, e);
        }
    }

    /** Edges evicted over the tier's life. */
    long evicted() {
        return evicted;
    }

    int edgeCount() {
        return edgeCount;
    }

    long conflicts() {
        return conflicts;
    }
}
