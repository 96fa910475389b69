package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Interns (worker, dp_rank) to dense ids. Freed ids are reused lowest-first so holder bitsets stay short.
 */
final class OwnerTable {
    private final Long2ObjectOpenHashMap<Int2ObjectOpenHashMap<Owner>> byWorker = new Long2ObjectOpenHashMap<>();
    private final BitSet used = new BitSet();
    private Owner[] byId = new Owner[64];
    private Owner last; // events arrive in runs from one owner

    Owner find(long workerId, int dpRank) {
        Owner o = last;
        if (o != null && o.workerId == workerId && o.dpRank == dpRank) {
            return o;
        }
        Int2ObjectOpenHashMap<Owner> ranks = byWorker.get(workerId);
        o = ranks == null ? null : ranks.get(dpRank);
        if (o != null) {
            last = o;
        }
        return o;
    }

    Owner intern(long workerId, int dpRank) {
        Owner o = find(workerId, dpRank);
        if (o != null) {
            return o;
        }
        int id = used.nextClearBit(0);
        used.set(id);
        o = new Owner(workerId, dpRank, id);
        if (id >= byId.length) {
            Owner[] grown = new Owner[Math.max(byId.length * 2, id + 1)];
            System.arraycopy(byId, 0, grown, 0, byId.length);
            byId = grown;
        }
        byId[id] = o;
        byWorker.computeIfAbsent(workerId, w -> new Int2ObjectOpenHashMap<>(2)).put(dpRank, o);
        last = o;
        return o;
    }

    /** Forgets an owner; the caller has already removed it from every node and edge. */
    void release(Owner o) {
        Int2ObjectOpenHashMap<Owner> ranks = byWorker.get(o.workerId);
        if (ranks != null) {
            ranks.remove(o.dpRank);
            if (ranks.isEmpty()) {
                byWorker.remove(o.workerId);
            }
        }
        byId[o.id] = null;
        used.clear(o.id);
        if (last == o) {
            last = null;
        }
    }

    Owner byId(int id) {
        return byId[id];
    }

    List<Owner> ofWorker(long workerId) {
        Int2ObjectOpenHashMap<Owner> ranks = byWorker.get(workerId);
        return ranks == null ? List.of() : new ArrayList<>(ranks.values());
    }

    /** One past the highest id in use: scratch arrays indexed by id need this length. */
    int idLimit() {
        return used.length();
    }

    int size() {
        return used.cardinality();
    }
}
