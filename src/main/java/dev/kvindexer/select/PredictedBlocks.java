package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.hash.BlockHasher;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Predicted entries (docs/api/selection.md#predicted-entries, {@code DYN_ROUTER_PREDICTED_TTL_SECS}): the blocks each
 * booking sent to a rank, held for a short TTL beside the event-driven index, so the next selection of the same prefix
 * sees them before the engine's first event does. A prefix is keyed by its chained hash, so a rank's predicted depth
 * along a prompt is a prefix, as in the index. Kept apart from the index because the router's hashes are not the
 * engine's: written into the index, one block would be held under two names. Single-threaded.
 */
public final class PredictedBlocks {
    /** A rank's predicted prefix of one prompt, in blocks. */
    public record Depth(long workerId, int dpRank, int blocks) {}

    /** One booking's prediction, kept until its TTL ends so its blocks can be checked against the engine's events. */
    public record Prediction(PartitionKey partition, long workerId, int dpRank, long[] blockHashes, long expiresAt) {}

    private final LongSupplier clockMillis;
    private final long ttlMillis;
    private final long maxEntries;
    private final Map<PartitionKey, Map<Long, Holders>> tables = new HashMap<>();
    /** Predictions in the order they end: the TTL is one value and the clock only moves on. */
    private final ArrayDeque<Held> queue = new ArrayDeque<>();

    private long entries;
    private long evictedEarly;

    /**
     * @param maxEntries (prefix, rank) pairs held together; beyond it the oldest predictions end early
     */
    public PredictedBlocks(LongSupplier clockMillis, long ttlMillis, long maxEntries) {
        if (ttlMillis <= 0 || maxEntries <= 0) {
            throw new IllegalArgumentException("a predicted-entry TTL and bound must be positive");
        }
        this.clockMillis = clockMillis;
        this.ttlMillis = ttlMillis;
        this.maxEntries = maxEntries;
    }

    /** Records that {@code blockHashes} (a booked prompt's local hashes) go to one rank, for the TTL from now. */
    public void record(PartitionKey p, long workerId, int dpRank, long[] blockHashes) {
        if (blockHashes.length == 0) {
            return;
        }
        long expiresAt = clockMillis.getAsLong() + ttlMillis;
        Map<Long, Holders> table = tables.computeIfAbsent(p, k -> new HashMap<>());
        long[] chain = BlockHasher.sequenceHashes(blockHashes);
        for (long prefix : chain) {
            if (table.computeIfAbsent(prefix, k -> new Holders()).hold(workerId, dpRank, expiresAt)) {
                entries++;
            }
        }
        queue.addLast(new Held(new Prediction(p, workerId, dpRank, blockHashes, expiresAt), chain));
        while (entries > maxEntries && !queue.isEmpty()) {
            release(queue.pollFirst());
            evictedEarly++;
        }
    }

    /** Each rank's live predicted prefix of a prompt's local hashes, longest first reached from block 0. */
    public List<Depth> depths(PartitionKey p, long[] blockHashes) {
        Map<Long, Holders> table = tables.get(p);
        if (table == null || blockHashes.length == 0) {
            return List.of();
        }
        long now = clockMillis.getAsLong();
        Holders first = table.get(blockHashes[0]);
        if (first == null) {
            return List.of();
        }
        List<Depth> out = new ArrayList<>();
        long[] workers = new long[first.size];
        int[] ranks = new int[first.size];
        int[] depth = new int[first.size];
        int alive = 0;
        for (int j = 0; j < first.size; j++) {
            if (first.expires[j] > now) {
                workers[alive] = first.workers[j];
                ranks[alive] = first.ranks[j];
                depth[alive++] = 1;
            }
        }
        long prefix = blockHashes[0];
        for (int i = 1; i < blockHashes.length && alive > 0; i++) {
            prefix = BlockHasher.chain(prefix, blockHashes[i]);
            Holders h = table.get(prefix);
            int still = 0;
            for (int j = 0; j < alive; j++) {
                if (h != null && h.holds(workers[j], ranks[j], now)) {
                    depth[j]++;
                    workers[still] = workers[j];
                    ranks[still] = ranks[j];
                    depth[still++] = depth[j];
                } else {
                    out.add(new Depth(workers[j], ranks[j], depth[j]));
                }
            }
            alive = still;
        }
        for (int j = 0; j < alive; j++) {
            out.add(new Depth(workers[j], ranks[j], depth[j]));
        }
        return out;
    }

    /** Ends every prediction whose TTL has passed and answers them, oldest first. */
    public List<Prediction> expire() {
        long now = clockMillis.getAsLong();
        List<Prediction> ended = new ArrayList<>();
        while (!queue.isEmpty() && queue.peekFirst().prediction().expiresAt() <= now) {
            Held h = queue.pollFirst();
            release(h);
            ended.add(h.prediction());
        }
        return ended;
    }

    /** Drops a worker's predictions in a partition (it left the catalog); {@code dpRank} -1 for all its ranks. */
    public void forget(PartitionKey p, long workerId, int dpRank) {
        Map<Long, Holders> table = tables.get(p);
        if (table == null) {
            return;
        }
        table.values().removeIf(h -> {
            entries -= h.drop(workerId, dpRank);
            return h.size == 0;
        });
    }

    /** (prefix, rank) pairs held. */
    public long entries() {
        return entries;
    }

    /** Predictions ended before their TTL because the side index was full. */
    public long evictedEarly() {
        return evictedEarly;
    }

    /** Takes a prediction's pairs out, unless a later booking of the same prefix for the same rank renewed them. */
    private void release(Held held) {
        Prediction p = held.prediction();
        Map<Long, Holders> table = tables.get(p.partition());
        if (table == null) {
            return;
        }
        for (long prefix : held.chain()) {
            Holders h = table.get(prefix);
            if (h != null && h.release(p.workerId(), p.dpRank(), p.expiresAt())) {
                entries--;
                if (h.size == 0) {
                    table.remove(prefix);
                }
            }
        }
        if (table.isEmpty()) {
            tables.remove(p.partition());
        }
    }

    private record Held(Prediction prediction, long[] chain) {}

    /** The ranks predicted to hold one prefix, with when each prediction ends; a prefix rarely has more than a few. */
    private static final class Holders {
        long[] workers = new long[2];
        int[] ranks = new int[2];
        long[] expires = new long[2];
        int size;

        /** Holds or renews; true when the rank is new here. */
        boolean hold(long worker, int rank, long expiresAt) {
            int i = indexOf(worker, rank);
            if (i >= 0) {
                expires[i] = Math.max(expires[i], expiresAt);
                return false;
            }
            if (size == workers.length) {
                workers = java.util.Arrays.copyOf(workers, size * 2);
                ranks = java.util.Arrays.copyOf(ranks, size * 2);
                expires = java.util.Arrays.copyOf(expires, size * 2);
            }
            workers[size] = worker;
            ranks[size] = rank;
            expires[size++] = expiresAt;
            return true;
        }

        boolean holds(long worker, int rank, long now) {
            int i = indexOf(worker, rank);
            return i >= 0 && expires[i] > now;
        }

        /** Removes the rank if its latest prediction ends at or before {@code expiresAt}; true when removed. */
        boolean release(long worker, int rank, long expiresAt) {
            int i = indexOf(worker, rank);
            if (i < 0 || expires[i] > expiresAt) {
                return false;
            }
            removeAt(i);
            return true;
        }

        /** Removes the worker's rank, or every rank of it with {@code rank} -1; answers how many went. */
        int drop(long worker, int rank) {
            int gone = 0;
            for (int i = size - 1; i >= 0; i--) {
                if (workers[i] == worker && (rank < 0 || ranks[i] == rank)) {
                    removeAt(i);
                    gone++;
                }
            }
            return gone;
        }

        private int indexOf(long worker, int rank) {
            for (int i = 0; i < size; i++) {
                if (workers[i] == worker && ranks[i] == rank) {
                    return i;
                }
            }
            return -1;
        }

        private void removeAt(int i) {
            size--;
            workers[i] = workers[size];
            ranks[i] = ranks[size];
            expires[i] = expires[size];
        }
    }
}
