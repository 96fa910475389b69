package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.select.Lifecycle;
import dev.kvindexer.select.Roster;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.web.ContextHop;
import dev.kvindexer.zmq.ZmqEndpoint;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Keeps the worker catalog and the embedded index's listeners in step (docs/api/selection.md#worker-catalog): a posted, patched or deleted
 * worker is brought into or out of service, one change at a time, since each waits for the indexer.
 */
final class WorkerReconciler {
    private final Roster roster;
    private final SelectionConfig config;
    private final IndexAccess index;
    private final Context home;
    /** The tail of the catalog changes in flight: each starts when the one before has finished. */
    private Future<?> tail = Future.succeededFuture();

    /** {@code home}: the context that owns {@code roster}. */
    WorkerReconciler(Roster roster, SelectionConfig config, IndexAccess index, Context home) {
        this.roster = roster;
        this.config = config;
        this.index = index;
        this.home = home;
    }

    Future<WorkerEntry> upsert(WorkerEntry entry) {
        return serially(() -> reconcile(entry));
    }

    /** Merges a patch into the stored record; 404 for an unknown worker. */
    Future<WorkerEntry> patch(long id, UnaryOperator<WorkerEntry> merge) {
        return serially(() -> reconcile(merge.apply(known(id))));
    }

    /** Takes the worker out of service and out of the catalog; answers its last record, unschedulable. */
    Future<WorkerEntry> delete(long id) {
        return serially(() -> {
            WorkerEntry w = known(id);
            roster.drain(w);
            Future<Void> gone = index.unregister(id, w.partition()).otherwiseEmpty();
            return ContextHop.on(home, gone).map(v -> {
                roster.catalog().remove(id);
                return w.with(Lifecycle.UNSCHEDULABLE, List.of());
            });
        });
    }

    private WorkerEntry known(long id) {
        WorkerEntry w = roster.catalog().get(id);
        if (w == null) {
            throw Refusal.notFound("worker " + Long.toUnsignedString(id) + " not found");
        }
        return w;
    }

    /**
     * Brings a posted or patched record into service (docs/api/selection.md#post-workers): an unchanged schedulable worker keeps its
     * listeners and reservations; otherwise the old one is drained and its listeners dropped, and a complete record
     * registers one listener per rank, rolled back as a whole when one fails.
     */
    private Future<WorkerEntry> reconcile(WorkerEntry entry) {
        WorkerEntry previous = roster.catalog().get(entry.workerId());
        SelectionConfig sc = config;
        List<String> reasons = entry.staticReasons(sc.queueing(), sc.useKvEvents());
        if (previous != null
                && previous.lifecycle() == Lifecycle.SCHEDULABLE
                && reasons.isEmpty()
                && sameRouting(previous, entry)) {
            return Future.succeededFuture(roster.refresh(entry));
        }
        Future<Void> drained = Future.succeededFuture();
        if (previous != null && previous.lifecycle() == Lifecycle.SCHEDULABLE) {
            roster.drain(previous);
            drained =
                    index.unregister(previous.workerId(), previous.partition()).otherwiseEmpty();
        }
        return ContextHop.on(home, drained).compose(v -> {
            if (!reasons.isEmpty()) {
                roster.putIncomplete(entry, reasons);
                return Future.succeededFuture(roster.catalog().get(entry.workerId()));
            }
            String conflict = roster.partitionConflict(entry);
            if (conflict != null) {
                roster.putIncomplete(entry, List.of("reconciliation failed: " + conflict));
                return Future.succeededFuture(roster.catalog().get(entry.workerId()));
            }
            roster.putIncomplete(entry, List.of());
            return ContextHop.on(home, registerListeners(entry)).transform(ar -> {
                if (ar.failed()) {
                    roster.putIncomplete(
                            entry,
                            List.of("reconciliation failed: " + ar.cause().getMessage()));
                    return Future.succeededFuture(roster.catalog().get(entry.workerId()));
                }
                try {
                    return Future.succeededFuture(roster.putSchedulable(entry));
                } catch (RuntimeException refused) {
                    // The scheduler refused what the index took: take the listeners back out, as for any failure.
                    Future<Void> undone = index.unregister(entry.workerId(), entry.partition())
                            .otherwiseEmpty();
                    return ContextHop.on(home, undone).map(gone -> {
                        roster.putIncomplete(entry, List.of("reconciliation failed: " + refused.getMessage()));
                        return roster.catalog().get(entry.workerId());
                    });
                }
            });
        });
    }

    private static boolean sameRouting(WorkerEntry a, WorkerEntry b) {
        if (!a.partition().equals(b.partition())
                || a.firstRank() != b.firstRank()
                || a.rankCount() != b.rankCount()
                || !a.blockSize().equals(b.blockSize())
                || a.eagle() != b.eagle()
                || !Objects.equals(a.replayEndpoint(), b.replayEndpoint())) {
            return false;
        }
        for (long r = a.firstRank(); r < a.firstRank() + a.rankCount(); r++) {
            if (!Objects.equals(a.eventsEndpoint(r), b.eventsEndpoint(r))) {
                return false;
            }
        }
        return true;
    }

    private Future<Void> registerListeners(WorkerEntry w) {
        PartitionKey key = w.partition();
        int blockSize = w.blockSize().intValue();
        Future<Void> partition = index.ensurePartition(key, blockSize);
        if (!config.useKvEvents()) {
            return partition;
        }
        String id = Long.toUnsignedString(w.workerId());
        if (w.replayEndpoint() != null) {
            String refusal = ZmqEndpoint.invalidMessage(w.replayEndpoint());
            if (refusal != null) {
                return Future.failedFuture("invalid replay endpoint for worker " + id + ": " + refusal);
            }
        }
        for (long r = w.firstRank(); r < w.firstRank() + w.rankCount(); r++) {
            String refusal = ZmqEndpoint.invalidMessage(w.eventsEndpoint(r));
            if (refusal != null) {
                return Future.failedFuture(
                        "invalid kv_events endpoint for worker " + id + " dp_rank " + r + ": " + refusal);
            }
        }
        List<RegisterRequest> ranks = new java.util.ArrayList<>();
        for (long r = w.firstRank(); r < w.firstRank() + w.rankCount(); r++) {
            ranks.add(new RegisterRequest(
                    w.workerId(), (int) r, w.eventsEndpoint(r), w.replayEndpoint(), key, blockSize));
        }
        return partition.compose(v -> index.registerAll(ranks));
    }

    /** Runs catalog changes one after another. */
    private <T> Future<T> serially(Supplier<Future<T>> change) {
        Promise<T> done = Promise.promise();
        tail.onComplete(x -> {
            try {
                change.get().onComplete(done);
            } catch (RuntimeException e) {
                done.fail(e);
            }
        });
        tail = done.future();
        return done.future();
    }
}
