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
import java.util.ArrayList;
import java.util.List;
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
    private final BookedPrompts prompts;
    private final Context home;
    /** The tail of the catalog changes in flight: each starts when the one before has finished. */
    private Future<?> tail = Future.succeededFuture();

    /** {@code home}: the context that owns {@code roster}; {@code prompts}: what bookings recorded, per rank. */
    WorkerReconciler(Roster roster, SelectionConfig config, IndexAccess index, BookedPrompts prompts, Context home) {
        this.roster = roster;
        this.config = config;
        this.index = index;
        this.prompts = prompts;
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
            return ContextHop.on(home, takeOut(w)).map(v -> {
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
     * Brings a posted or patched record into service (docs/api/selection.md#post-workers). A schedulable worker that
     * stays schedulable in its partition is updated rank by rank; one that moves or stops being schedulable is taken
     * out whole first; a complete record then registers one listener per rank, rolled back as a whole when one fails.
     */
    private Future<WorkerEntry> reconcile(WorkerEntry entry) {
        WorkerEntry previous = roster.catalog().get(entry.workerId());
        List<String> reasons = reasons(entry);
        boolean live = previous != null && previous.lifecycle() == Lifecycle.SCHEDULABLE;
        if (live && reasons.isEmpty() && previous.partition().equals(entry.partition())) {
            return update(previous, entry);
        }
        Future<Void> drained = live ? takeOut(previous) : Future.succeededFuture();
        return ContextHop.on(home, drained).compose(v -> {
            if (!reasons.isEmpty()) {
                return incomplete(entry, reasons);
            }
            roster.putIncomplete(entry, List.of());
            return settle(entry, registerListeners(entry), false, () -> roster.putSchedulable(entry));
        });
    }

    /** Why the worker cannot be scheduled before its listeners are tried; empty when nothing stands in the way. */
    private List<String> reasons(WorkerEntry entry) {
        List<String> reasons = entry.staticReasons(config.queueing(), config.useKvEvents());
        if (!reasons.isEmpty()) {
            return reasons;
        }
        String conflict = roster.partitionConflict(entry);
        return conflict == null ? List.of() : List.of("reconciliation failed: " + conflict);
    }

    /**
     * A schedulable worker's new record in the same partition: a rank whose endpoints stay keeps its listener, its
     * watermark, its blocks and its reservations, so a capacity or taint change leaves the cache view as it is; a
     * rank whose endpoint changed gets a new listener (its blocks go, its reservations stay); a rank outside the new
     * range goes whole, and a new one is registered.
     */
    private Future<WorkerEntry> update(WorkerEntry previous, WorkerEntry entry) {
        Future<Void> listeners = ContextHop.on(home, dropRanks(previous, entry)).compose(v -> registerListeners(entry));
        return settle(entry, listeners, true, () -> roster.reshape(entry));
    }

    private Future<Void> dropRanks(WorkerEntry previous, WorkerEntry entry) {
        Future<Void> done = Future.succeededFuture();
        if (!config.useKvEvents()) {
            return done;
        }
        for (long r : previous.ranksReplacedBy(entry)) {
            // A rank with another publisher is another engine: nothing booked on the old one is on it.
            prompts.forget(previous.partition(), previous.workerId(), (int) r);
            if (entry.hasRank(r) && index.registeredAs(rankRequest(entry, r))) {
                // Another replica of the cluster already moved this rank to its new publisher: its blocks since stay.
                continue;
            }
            done = done.compose(v -> index.unregisterRank(previous.workerId(), previous.partition(), (int) r)
                    .otherwiseEmpty());
        }
        return done;
    }

    private static RegisterRequest rankRequest(WorkerEntry w, long rank) {
        return new RegisterRequest(
                w.workerId(),
                (int) rank,
                w.eventsEndpoint(rank),
                w.replayEndpoint(),
                w.partition(),
                w.blockSize().intValue());
    }

    /**
     * Schedules the worker once its listeners are in place. Otherwise, or when the scheduler refuses it, the worker
     * stays incomplete and leaves the scheduler; its listeners go too when {@code ownsListeners} (a failed first
     * registration has rolled its own back, and the others may be the indexer's).
     */
    private Future<WorkerEntry> settle(
            WorkerEntry entry, Future<Void> listeners, boolean ownsListeners, Supplier<WorkerEntry> schedule) {
        return ContextHop.on(home, listeners).transform(ar -> {
            Throwable failure = ar.cause();
            if (ar.succeeded()) {
                try {
                    return Future.succeededFuture(schedule.get());
                } catch (RuntimeException refused) {
                    failure = refused;
                }
            }
            List<String> reason = List.of("reconciliation failed: " + failure.getMessage());
            Future<Void> gone = ar.failed() && !ownsListeners
                    ? Future.succeededFuture()
                    : takeOut(roster.catalog().get(entry.workerId()));
            return ContextHop.on(home, gone).compose(v -> incomplete(entry, reason));
        });
    }

    private Future<WorkerEntry> incomplete(WorkerEntry entry, List<String> reasons) {
        roster.putIncomplete(entry, reasons);
        return Future.succeededFuture(roster.catalog().get(entry.workerId()));
    }

    /** Takes a worker out of the scheduler (its reservations go) and out of the index (its listeners and blocks). */
    private Future<Void> takeOut(WorkerEntry w) {
        roster.drain(w);
        prompts.forget(w.partition(), w.workerId(), -1);
        return index.unregister(w.workerId(), w.partition()).otherwiseEmpty();
    }

    /**
     * The partition, then with KV events on every rank's listener; ranks registered as asked already stay. Endpoints
     * are checked before any listener is created.
     */
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
        List<RegisterRequest> ranks = new ArrayList<>();
        for (long r = w.firstRank(); r < w.firstRank() + w.rankCount(); r++) {
            String refusal = ZmqEndpoint.invalidMessage(w.eventsEndpoint(r));
            if (refusal != null) {
                return Future.failedFuture(
                        "invalid kv_events endpoint for worker " + id + " dp_rank " + r + ": " + refusal);
            }
            ranks.add(rankRequest(w, r));
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
