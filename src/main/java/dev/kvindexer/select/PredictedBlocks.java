package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.PartitionIndex;
import dev.kvindexer.index.StoreOutcome;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Predicted entries (docs/api/selection.md#predicted-entries, {@code DYN_ROUTER_PREDICTED_TTL_SECS}): the blocks each
 * booking sent to a rank, held for a short TTL beside the event-driven index, so the next selection of the same prefix
 * sees them before the engine's first event does. Each partition's are a prefix tree of their own, the index core's,
 * holding one copy of a block per live booking that predicts it: a block stays while any of its bookings is recent.
 * Kept apart from the index of engine events because the router's hashes are not the engine's: written into it, one
 * block would be held under two names. Single-threaded.
 */
public final class PredictedBlocks {
    /** A rank's predicted prefix of one prompt, in blocks. */
    public record Depth(long workerId, int dpRank, int blocks) {}

    /** One booking's prediction, kept until its TTL ends so its blocks can be checked against the engine's events. */
    public record Prediction(PartitionKey partition, long workerId, int dpRank, long[] blockHashes, long expiresAt) {}

    private final LongSupplier clockMillis;
    private final long ttlMillis;
    private final long maxEntries;
    private final Map<PartitionKey, PartitionIndex> tables = new HashMap<>();
    /** Live predictions in the order they end: the TTL is one value and the clock only moves on. */
    private final ArrayDeque<Held> queue = new ArrayDeque<>();

    private long entries;
    private long evictedEarly;

    /**
     * @param maxEntries predicted blocks held together, a block counted once per booking that predicts it; beyond it
     *                   the oldest predictions end early
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
        // The chained hashes name the blocks: one name per prefix, whatever the engine calls it.
        long[] chain = BlockHasher.sequenceHashes(blockHashes);
        StoreOutcome stored = tables.computeIfAbsent(p, k -> new PartitionIndex(1))
                .store(workerId, dpRank, StorageTier.DEVICE, false, 0, chain, blockHashes);
        if (stored != StoreOutcome.OK) {
            return; // a chain the tree can never hold: this booking predicts nothing
        }
        entries += chain.length;
        queue.addLast(
                new Held(new Prediction(p, workerId, dpRank, blockHashes, clockMillis.getAsLong() + ttlMillis), chain));
        while (entries > maxEntries) {
            release(queue.pollFirst());
            evictedEarly++;
        }
    }

    /** Each rank's predicted prefix of a prompt's local hashes, from its first block. */
    public List<Depth> depths(PartitionKey p, long[] blockHashes) {
        PartitionIndex table = tables.get(p);
        if (table == null || blockHashes.length == 0) {
            return List.of();
        }
        List<Depth> out = new ArrayList<>();
        for (OwnerMatch m : table.match(blockHashes)) {
            if (m.gpuBlocks() > 0) {
                out.add(new Depth(m.workerId(), m.dpRank(), m.gpuBlocks()));
            }
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
        PartitionIndex table = tables.get(p);
        if (table == null) {
            return;
        }
        if (dpRank < 0) {
            table.removeWorker(workerId);
        } else {
            table.removeWorkerDpRank(workerId, dpRank);
        }
        queue.removeIf(h -> {
            Prediction x = h.prediction();
            boolean gone = x.partition().equals(p) && x.workerId() == workerId && (dpRank < 0 || x.dpRank() == dpRank);
            if (gone) {
                entries -= h.chain().length;
            }
            return gone;
        });
    }

    /** Predicted blocks held, each counted once per booking that predicts it. */
    public long entries() {
        return entries;
    }

    /** Predictions ended before their TTL because the side index was full. */
    public long evictedEarly() {
        return evictedEarly;
    }

    /** Takes one prediction's copies out: a block another live booking predicts stays. */
    private void release(Held held) {
        Prediction p = held.prediction();
        PartitionIndex table = tables.get(p.partition());
        if (table == null) {
            return;
        }
        table.remove(p.workerId(), p.dpRank(), StorageTier.DEVICE, held.chain());
        entries -= held.chain().length;
        if (table.isEmpty()) {
            tables.remove(p.partition());
        }
    }

    private record Held(Prediction prediction, long[] chain) {}
}
