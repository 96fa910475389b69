package dev.kvindexer.index;

import java.util.Arrays;

/**
 * The ordinary owners (shared stores left out) in answer order, worker id unsigned then rank, so that a query's
 * owners come out in that order without a sort per query: a prompt that a whole fleet holds the start of answers one
 * entry per engine, and sorting those by worker would cost more than the walk. Kept in place as owners come and go, which
 * happens under the partition's write lock, so queries under its read lock see it whole.
 */
final class OwnerOrder {
    int size;
    /** Changes with every owner that arrives or leaves, so an answer kept from before can tell it is stale. */
    int version;
    /** Owner ids in answer order, with their worker and rank beside them so an answer reads no owner object. */
    int[] ids = new int[64];

    long[] workers = new long[64];
    int[] ranks = new int[64];
    /** By owner id: its place in the order, or -1 for a shared store or a free id. */
    int[] place = filled(new int[64], 0);

    void add(Owner o) {
        if (size == ids.length) {
            int cap = size * 2;
            ids = Arrays.copyOf(ids, cap);
            workers = Arrays.copyOf(workers, cap);
            ranks = Arrays.copyOf(ranks, cap);
        }
        if (o.id >= place.length) {
            int old = place.length;
            place = filled(Arrays.copyOf(place, Math.max(o.id + 1, old * 2)), old);
        }
        int p = placeFor(o.workerId, o.dpRank);
        System.arraycopy(ids, p, ids, p + 1, size - p);
        System.arraycopy(workers, p, workers, p + 1, size - p);
        System.arraycopy(ranks, p, ranks, p + 1, size - p);
        ids[p] = o.id;
        workers[p] = o.workerId;
        ranks[p] = o.dpRank;
        size++;
        version++;
        renumberFrom(p);
    }

    void remove(Owner o) {
        int p = o.id < place.length ? place[o.id] : -1;
        if (p < 0) {
            return;
        }
        System.arraycopy(ids, p + 1, ids, p, size - p - 1);
        System.arraycopy(workers, p + 1, workers, p, size - p - 1);
        System.arraycopy(ranks, p + 1, ranks, p, size - p - 1);
        size--;
        version++;
        place[o.id] = -1;
        renumberFrom(p);
    }

    /** The heap of its columns. */
    long bytes() {
        return 4L * (ids.length + ranks.length + place.length) + 8L * workers.length;
    }

    private void renumberFrom(int p) {
        for (int k = p; k < size; k++) {
            place[ids[k]] = k;
        }
    }

    /** The first place whose owner comes after (worker, rank). */
    private int placeFor(long workerId, int dpRank) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int c = Long.compareUnsigned(workers[mid], workerId);
            if (c < 0 || (c == 0 && ranks[mid] < dpRank)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static int[] filled(int[] a, int from) {
        Arrays.fill(a, from, a.length, -1);
        return a;
    }
}
