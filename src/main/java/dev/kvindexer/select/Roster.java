package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.load.SlotTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Which workers schedule, and in which partition (docs/api/selection.md#worker-catalog): the catalog, each partition's fixed properties, and
 * the ranks the load tracker knows. A worker joins its partition's scheduler with no load and leaves it with its
 * reservations dropped.
 */
public final class Roster {

    private final WorkerCatalog catalog = new WorkerCatalog();
    private final TreeMap<PartitionKey, PartitionInfo> partitions = new TreeMap<>();
    private final SlotTracker tracker;
    private final Ledger ledger;

    Roster(SlotTracker tracker, Ledger ledger) {
        this.tracker = tracker;
        this.ledger = ledger;
    }

    public WorkerCatalog catalog() {
        return catalog;
    }

    public PartitionInfo partition(PartitionKey p) {
        return partitions.get(p);
    }

    public List<PartitionKey> partitions() {
        return new ArrayList<>(partitions.keySet());
    }

    public int schedulableWorkers() {
        return catalog.schedulableCount();
    }

    /**
     * The reason a complete worker cannot join its partition, or null: the partition's block size and Eagle flag
     * are its first worker's.
     */
    public String partitionConflict(WorkerEntry e) {
        PartitionInfo info = partitions.get(e.partition());
        if (info == null) {
            return null;
        }
        if (info.blockSize() != e.blockSize()) {
            return "block_size mismatch for " + e.partition() + ": existing=" + info.blockSize() + " requested="
                    + e.blockSize();
        }
        if (info.eagle() != e.eagle()) {
            return "is_eagle mismatch for " + e.partition() + ": existing=" + info.eagle() + " requested=" + e.eagle();
        }
        return null;
    }

    /** Stores a worker that is not (or no longer) schedulable. */
    public void putIncomplete(WorkerEntry e, List<String> reasons) {
        catalog.put(e.with(Lifecycle.INCOMPLETE, reasons));
    }

    /** Stores a worker whose listeners are in place: its ranks join the partition's scheduler with no load. */
    public WorkerEntry putSchedulable(WorkerEntry e) {
        PartitionKey p = e.partition();
        partitions.putIfAbsent(p, new PartitionInfo(e.blockSize().intValue(), e.eagle()));
        tracker.register(p, e.workerId(), e.blockSize().intValue(), e.firstRank(), e.rankCount());
        return refresh(e);
    }

    /**
     * Stores a schedulable worker's new record in the same partition: its ranks in both ranges keep their
     * reservations, those outside the new range go with theirs, new ones join with no load.
     */
    public WorkerEntry reshape(WorkerEntry e) {
        for (String id : tracker.reshape(e.partition(), e.workerId(), e.firstRank(), e.rankCount())) {
            ledger.forget(id);
        }
        return refresh(e);
    }

    private WorkerEntry refresh(WorkerEntry e) {
        WorkerEntry stored = e.with(Lifecycle.SCHEDULABLE, List.of());
        catalog.put(stored);
        return stored;
    }

    /** Takes a schedulable worker's ranks out of the scheduler, dropping their reservations. */
    public void drain(WorkerEntry e) {
        if (e.lifecycle() != Lifecycle.SCHEDULABLE) {
            return;
        }
        for (String id : tracker.unregister(e.partition(), e.workerId())) {
            ledger.forget(id);
        }
        catalog.put(e.with(Lifecycle.DRAINING, List.of()));
    }

    /**
     * The partition a selection or booking may use: 503 when no worker of the whole service, or of this partition, is
     * schedulable (docs/api/selection.md#post-select step 2).
     */
    public PartitionInfo requireReady(PartitionKey p) {
        if (catalog.schedulableCount() == 0) {
            throw Refusal.unavailable("no schedulable workers are available");
        }
        PartitionInfo info = partitions.get(p);
        if (info == null || catalog.schedulable(p).isEmpty()) {
            throw Refusal.unavailable("no schedulable workers for " + p);
        }
        return info;
    }

    /** A schedulable worker of the partition, or null. */
    WorkerEntry schedulable(long workerId, PartitionKey p) {
        WorkerEntry w = catalog.get(workerId);
        return w == null
                        || w.lifecycle() != Lifecycle.SCHEDULABLE
                        || !w.partition().equals(p)
                ? null
                : w;
    }

    /** Whether a target's worker is schedulable in the partition, with the target's rank among its ranks. */
    boolean schedulable(PartitionKey p, AffinityTarget t) {
        WorkerEntry w = schedulable(t.workerId(), p);
        return w != null && (t.dpRank() == null || w.hasRank(t.dpRank()));
    }

    /** Whether a target's worker is in the partition's catalog, in any state. */
    boolean catalogued(PartitionKey p, AffinityTarget t) {
        WorkerEntry w = catalog.get(t.workerId());
        return w != null && w.partition().equals(p);
    }

    /** Every rank's load with the prompt's active depth there; good until the tracker next changes. */
    SlotTracker.ActiveLoads loads(PartitionKey p, long[] sequenceHashes) {
        return tracker.activeLoads(p, sequenceHashes);
    }

    /** A registered rank's active load; null when unknown. */
    SlotTracker.ActiveLoad load(PartitionKey p, long workerId, long rank) {
        return tracker.activeLoad(p, workerId, rank);
    }
}
