package dev.kvindexer.index;

import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Interns (worker, dp_rank) to dense ids. Freed ids are reused lowest-first so holder bitsets stay short. Also knows
 * which workers are shared store owners, as a bitset over owner ids that a holder set can be tested against.
 *
 * <p>Keeps the heap its owners hold as a running sum: an owner handed out for a change is marked touched and counted
 * again at the next {@link #bytes()}, so measuring after a batch costs the owners the batch touched, not the fleet.
 */
final class OwnerTable {
    private final Long2ObjectOpenHashMap<Int2ObjectOpenHashMap<Owner>> byWorker = new Long2ObjectOpenHashMap<>();
    private final BitSet used = new BitSet();
    private final LongOpenHashSet storeWorkers = new LongOpenHashSet();
    private long[] storeWords = new long[1];
    private int storeOwners;
    private Owner[] byId = new Owner[64];
    private Owner last; // events arrive in runs from one owner
    /** The sum of the live owners' {@link Owner#countedBytes}. */
    private long ownerBytes;

    private Owner[] touched = new Owner[16];
    private int touchedCount;
    private final OwnerOrder order = new OwnerOrder();

    /** The owner, to be changed: it is counted again at the next {@link #bytes()}. */
    Owner find(long workerId, int dpRank) {
        Owner o = last;
        if (o != null && o.workerId == workerId && o.dpRank == dpRank) {
            return touch(o);
        }
        o = lookup(workerId, dpRank);
        if (o != null) {
            last = o;
            touch(o);
        }
        return o;
    }

    private Owner touch(Owner o) {
        if (!o.touched) {
            o.touched = true;
            if (touchedCount == touched.length) {
                touched = java.util.Arrays.copyOf(touched, touchedCount * 2);
            }
            touched[touchedCount++] = o;
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
        order.add(o);
        touch(o);
        byWorker.computeIfAbsent(workerId, w -> new Int2ObjectOpenHashMap<>(2)).put(dpRank, o);
        last = o;
        if (storeWorkers.contains(workerId)) {
            setStore(o, true);
        }
        return o;
    }

    /** Marks every present and future rank of a worker as a shared store owner, or ordinary again. */
    void markStore(long workerId, boolean store) {
        if (store) {
            storeWorkers.add(workerId);
        } else {
            storeWorkers.remove(workerId);
        }
        for (Owner o : ofWorker(workerId)) {
            setStore(o, store);
        }
    }

    /** Distinct engine hashes all owners hold in a tier: (block, holder) pairs of that tier. */
    long held(dev.kvindexer.event.StorageTier tier) {
        long n = 0;
        for (int id = used.nextSetBit(0); id >= 0; id = used.nextSetBit(id + 1)) {
            n += byId[id].held(tier);
        }
        return n;
    }

    void forEachStoreWorker(java.util.function.LongConsumer action) {
        storeWorkers.forEach(action);
    }

    boolean isStoreWorker(long workerId) {
        return storeWorkers.contains(workerId);
    }

    private void setStore(Owner o, boolean store) {
        if (o.store == store) {
            return;
        }
        o.store = store;
        if (store) {
            order.remove(o);
        } else {
            order.add(o);
        }
        int w = o.id >>> 6;
        if (w >= storeWords.length) {
            storeWords = java.util.Arrays.copyOf(storeWords, Math.max(w + 1, storeWords.length * 2));
        }
        if (store) {
            storeWords[w] |= 1L << o.id;
            storeOwners++;
        } else {
            storeWords[w] &= ~(1L << o.id);
            storeOwners--;
        }
    }

    boolean anyStore() {
        return storeOwners > 0;
    }

    /** True when a shared store owner is among the holders. */
    boolean heldByStore(HolderSet holders) {
        if (storeOwners == 0) {
            return false;
        }
        int words = Math.min(holders.wordCount(), storeWords.length);
        for (int w = 0; w < words; w++) {
            if ((holders.word(w) & storeWords[w]) != 0) {
                return true;
            }
        }
        return false;
    }

    /** Forgets an owner; the caller has already removed it from every node and edge. */
    void release(Owner o) {
        setStore(o, false);
        Int2ObjectOpenHashMap<Owner> ranks = byWorker.get(o.workerId);
        if (ranks != null) {
            ranks.remove(o.dpRank);
            if (ranks.isEmpty()) {
                byWorker.remove(o.workerId);
            }
        }
        byId[o.id] = null;
        order.remove(o);
        used.clear(o.id);
        ownerBytes -= o.countedBytes;
        o.countedBytes = 0;
        if (last == o) {
            last = null;
        }
    }

    /** The ordinary owners in answer order; to be read while no change runs (a query, or the partition's thread). */
    OwnerOrder order() {
        return order;
    }

    /** The owner, to be read only, or null; safe on several threads at once while no change runs. */
    Owner lookup(long workerId, int dpRank) {
        Int2ObjectOpenHashMap<Owner> ranks = byWorker.get(workerId);
        return ranks == null ? null : ranks.get(dpRank);
    }

    /** The owner, to be read only. */
    Owner byId(int id) {
        return byId[id];
    }

    /** The owner, to be changed (an eviction takes blocks from it). */
    Owner byIdToChange(int id) {
        return touch(byId[id]);
    }

    /** Heap held by the owners and the maps of blocks each keeps for itself. */
    long bytes() {
        for (int i = 0; i < touchedCount; i++) {
            Owner o = touched[i];
            touched[i] = null;
            o.touched = false;
            if (byId[o.id] == o) {
                long b = o.bytes();
                ownerBytes += b - o.countedBytes;
                o.countedBytes = b;
            }
        }
        touchedCount = 0;
        return tableBytes() + ownerBytes;
    }

    /** {@link #bytes()} counted owner by owner, as a check of the running sum. */
    long bytesRecounted() {
        long b = tableBytes();
        for (int id = used.nextSetBit(0); id >= 0; id = used.nextSetBit(id + 1)) {
            b += byId[id].bytes();
        }
        return b;
    }

    private long tableBytes() {
        return HeapSizes.openHashMap(byWorker.size(), 12) + 8L * byId.length + order.bytes();
    }

    /** The worker's owners, to be changed. */
    List<Owner> ofWorker(long workerId) {
        Int2ObjectOpenHashMap<Owner> ranks = byWorker.get(workerId);
        if (ranks == null) {
            return List.of();
        }
        List<Owner> out = new ArrayList<>(ranks.values());
        out.forEach(this::touch);
        return out;
    }

    /** One past the highest id in use: scratch arrays indexed by id need this length. */
    int idLimit() {
        return used.length();
    }

    int size() {
        return used.cardinality();
    }
}
