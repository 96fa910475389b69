package dev.kvindexer.cluster;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionView;
import dev.kvindexer.recovery.InstanceHistory;
import dev.kvindexer.recovery.RecoveryReport;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.spi.cluster.ClusterManager;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves shards between nodes without loss as Hazelcast's partition table changes (joins, leaves, failures). A node
 * that now holds an instance's shard takes the instance's exact snapshot from a node that serves it, installs it, and
 * only then listens: its streams resume from the snapshot's watermarks and the engine replays what came in between
 * (docs/protocol/recovery.md#recovery-algorithm). A node that no longer holds a shard lets it go once every current holder serves it.
 * Passes run when Hazelcast finishes a round of migrations, on membership changes and periodically.
 */
public final class ShardHandover {
    private static final Logger LOG = LoggerFactory.getLogger(ShardHandover.class);
    static final String ADDRESS_PREFIX = "kvindexer.shard.snapshot.";

    private final Vertx vertx;
    private final ClusterManager manager;
    private final Registry registry;
    private final LocalRegistrar local;
    private final ShardPlacement placement;
    private final ShardQueries queries;
    private final Duration settle;
    private final AtomicBoolean running = new AtomicBoolean();
    /** A pass was asked for while one ran: it runs again when that one ends. */
    private final AtomicBoolean again = new AtomicBoolean();
    /** Passes wait while the node restores its data directory (see {@link #deferPasses}). */
    private final AtomicBoolean deferred = new AtomicBoolean();

    private MessageConsumer<Buffer> consumer;
    private UUID migrations;
    /** How often the placement is looked at for a change the registered instances made. */
    private static final long PLACEMENT_CHECK_MILLIS = 1000;

    private long placementWatch = -1;
    private long placementSeen = -1;
    /** What hand-overs took until the first pass that took all it had to: the node's recovery when it joined. */
    private final long createdNanos = System.nanoTime();

    private int takenInstances;
    private long takenEvents;
    private boolean takenExactly = true;
    private RecoveryReport joined;
    private Consumer<RecoveryReport> onJoined = r -> {};

    /** {@code settle} is how long a held listener's subscription is given to reach its engine before the snapshot. */
    public ShardHandover(
            Vertx vertx,
            ClusterManager manager,
            Registry registry,
            LocalRegistrar local,
            ShardPlacement placement,
            ShardQueries queries,
            Duration settle) {
        this.vertx = vertx;
        this.manager = manager;
        this.registry = registry;
        this.local = local;
        this.placement = placement;
        this.queries = queries;
        this.settle = settle;
    }

    /**
     * Starts giving other nodes the snapshots of the instances this node serves, and rebalancing whenever a member
     * joins or leaves or the placement changes with the registered instances (besides the periodic passes the node
     * runs anyway).
     */
    public Future<Void> start() {
        consumer = vertx.eventBus().consumer(ADDRESS_PREFIX + manager.getNodeId(), this::giveSnapshot);
        migrations = placement.onMembersChanged(() -> vertx.runOnContext(v -> rebalance()));
        placementWatch = vertx.setPeriodic(PLACEMENT_CHECK_MILLIS, id -> {
            long stamp = placement.stamp();
            if (stamp != placementSeen) {
                placementSeen = stamp;
                rebalance();
            }
        });
        return consumer.completion();
    }

    /**
     * Until {@link #resumePasses}, a pass asked for only waits: a node starting from its data directory must first
     * restore the instances its file has the history of, or a pass could take them over from a node without it.
     * Called before {@link #start}, so no pass is under way.
     */
    public void deferPasses() {
        deferred.set(true);
    }

    /** Passes run again; the caller runs one. */
    public void resumePasses() {
        deferred.set(false);
    }

    public Future<Void> stop() {
        if (migrations != null) {
            placement.stopWatching(migrations);
        }
        vertx.cancelTimer(placementWatch);
        return consumer == null ? Future.succeededFuture() : consumer.unregister();
    }

    private void giveSnapshot(Message<Buffer> msg) {
        ShardQueryCodec.Request request = queries.receive(ShardQueries.SNAPSHOT, msg);
        if (request == null) {
            return;
        }
        PartitionKey key = request.key();
        PartitionRef partition = registry.partition(key).orElse(null);
        for (long w : request.workers()) {
            if (partition == null || !key.equals(registry.partitionOf(w)) || !registry.servesHere(w)) {
                msg.fail(404, "instance " + Long.toUnsignedString(w) + " is not served here");
                return;
            }
        }
        PartitionRef hosted = PartitionView.hostedOf(partition);
        hosted.snapshotOf(request.workers()).onComplete(ar -> {
            if (ar.failed()) {
                msg.fail(500, String.valueOf(ar.cause().getMessage()));
                return;
            }
            Buffer document = ShardQueries.document(key, hosted.blockSize(), ar.result());
            if (document.length() > queries.maxMessageBytes()) {
                // Sent anyway, the taker's bus would close the connection and every message on it with it.
                msg.fail(
                        413,
                        "the snapshot is " + document.length() + " bytes, over the event bus limit of "
                                + queries.maxMessageBytes() + " (--recovery-max-bytes, at most a quarter of the heap)");
                return;
            }
            queries.reply(ShardQueries.SNAPSHOT, msg, document);
        });
    }

    /**
     * One pass over this node's instances: takes over the shards it now holds, replaces its copies without history
     * where another node has one with it, then lets go of those it no longer holds. Asked for while a pass runs, it runs once more after that one; a failed step is retried by the next.
     */
    /**
     * Hears, once, what the hand-overs took by the end of the first pass that took every shard it had to: the
     * node's recovery when it joined ready nodes ({@link RecoveryReport#NONE} when there was nothing to take).
     */
    public synchronized void onJoined(Consumer<RecoveryReport> listener) {
        onJoined = listener;
        if (joined != null) {
            listener.accept(joined);
        }
    }

    private synchronized void taken(int events, boolean exact) {
        takenInstances++;
        takenEvents += events;
        takenExactly &= exact;
    }

    private void passEnded(boolean tookAll) {
        RecoveryReport report;
        Consumer<RecoveryReport> listener;
        synchronized (this) {
            if (joined != null || !tookAll) {
                return;
            }
            joined = takenInstances == 0
                    ? RecoveryReport.NONE
                    : new RecoveryReport(
                            "shard hand-over",
                            takenInstances,
                            takenEvents,
                            takenExactly,
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - createdNanos));
            report = joined;
            listener = onJoined;
        }
        listener.accept(report);
    }

    public Future<Void> rebalance() {
        if (deferred.get() || !running.compareAndSet(false, true)) {
            again.set(true);
            return Future.succeededFuture();
        }
        AtomicBoolean tookAll = new AtomicBoolean(true);
        Map<Long, List<Listener>> take = new LinkedHashMap<>();
        Map<Long, List<Listener>> refresh = new LinkedHashMap<>();
        Map<Long, List<Listener>> give = new LinkedHashMap<>();
        for (Listener l : registry.listeners()) {
            boolean holds = placement.holdsHere(
                    l.partitionKey(), l.workerId(), l.publisher().isStore());
            if (l.state() == ListenerState.REMOTE && holds) {
                take.computeIfAbsent(l.workerId(), w -> new ArrayList<>()).add(l);
            } else if (l.state() != ListenerState.REMOTE && !holds) {
                give.computeIfAbsent(l.workerId(), w -> new ArrayList<>()).add(l);
            } else if (l.state() != ListenerState.REMOTE && registry.servesWithoutHistory(l.workerId())) {
                refresh.computeIfAbsent(l.workerId(), w -> new ArrayList<>()).add(l);
            }
        }
        Future<Void> chain = Future.succeededFuture();
        for (List<Listener> ls : take.values()) {
            chain = chain.compose(v -> takeOver(ls).recover(t -> {
                tookAll.set(false);
                LOG.warn(
                        "taking over the shard of instance {} failed; the next pass retries: {}",
                        Long.toUnsignedString(ls.get(0).workerId()),
                        t.getMessage());
                return Future.succeededFuture();
            }));
        }
        for (List<Listener> ls : refresh.values()) {
            chain = chain.compose(v -> refresh(ls).recover(t -> {
                LOG.warn(
                        "replacing the copy of instance {} without history failed; the next pass retries: {}",
                        Long.toUnsignedString(ls.get(0).workerId()),
                        t.getMessage());
                return Future.succeededFuture();
            }));
        }
        for (List<Listener> ls : give.values()) {
            chain = chain.compose(v -> letGo(ls).recover(t -> {
                LOG.warn(
                        "letting go of the shard of instance {} failed; the next pass retries: {}",
                        Long.toUnsignedString(ls.get(0).workerId()),
                        t.getMessage());
                return Future.succeededFuture();
            }));
        }
        return chain.eventually(() -> {
            passEnded(tookAll.get());
            running.set(false);
            if (again.getAndSet(false)) {
                rebalance();
            }
            return Future.succeededFuture();
        });
    }

    /**
     * Takes the instance over from a node that serves it: its listeners here start held, and after
     * {@link #settle} (for their subscriptions to reach the engine) the snapshot is taken there and installed here.
     * When every live node answers that it does not serve the instance, every holder of its shard was lost: the
     * instance is subscribed here afresh and rebuilt from its engine's replay, from seq 0, as a first registration
     * is. Until then queries name it as missing.
     */
    private Future<Void> takeOver(List<Listener> remote) {
        Listener first = remote.get(0);
        PartitionKey key = first.partitionKey();
        long worker = first.workerId();
        ArrayDeque<String> order = placement.askOrder(key, worker, manager.getNodes(), manager.getNodeId());
        ArrayDeque<String> withHistory = new ArrayDeque<>(order);
        // Ask first who serves it, so an instance nobody serves costs no subscription. A copy with the instance's
        // history is preferred; one without (a node that came up first with nothing of it) only when none has it.
        return firstServing(key, worker, withHistory, false, true)
                .compose(
                        server -> install(remote, server, withHistory, true),
                        none -> firstServing(key, worker, order, false, false)
                                .compose(server -> install(remote, server, order, false)))
                .recover(t -> {
                    if (!(t instanceof NobodyServes)) {
                        return Future.failedFuture(t);
                    }
                    LOG.warn(
                            "no live node serves instance {} in {}: every holder of its shard was lost; rebuilding it here "
                                    + "from its engine's replay",
                            Long.toUnsignedString(worker),
                            key.dumpKey());
                    queries.rebuilt();
                    taken(0, false);
                    return local.rebuild(remote);
                });
    }

    /**
     * Takes the snapshot from {@code server} first, then from the other {@code candidates}, and installs it; with
     * {@code withHistory} only from a node that serves the instance with its history, otherwise the copy here is
     * marked as lacking it too.
     */
    private Future<Void> install(
            List<Listener> remote, String server, ArrayDeque<String> candidates, boolean withHistory) {
        PartitionKey key = remote.get(0).partitionKey();
        long worker = remote.get(0).workerId();
        candidates.addFirst(server);
        return local.takeOver(remote, hosted -> {
            if (!withHistory) {
                registry.markWithoutHistory(worker);
            }
            return vertx.timer(settle.toMillis())
                    .compose(t -> queries.snapshot(key, worker, candidates, withHistory))
                    .compose(snapshot -> {
                        LOG.info(
                                "taking over the shard of instance {} in {} ({} events{})",
                                Long.toUnsignedString(worker),
                                key.dumpKey(),
                                snapshot.events().size(),
                                withHistory ? "" : ", no node has its history");
                        return hosted.recover(snapshot)
                                .onSuccess(done -> taken(snapshot.events().size(), withHistory && snapshot.exact()));
                    });
        });
    }

    /**
     * This node serves the instance without its history: when another node serves it with its history, this copy is
     * dropped and that one taken over, as a hand-over does. Otherwise this copy stays, the best there is.
     */
    private Future<Void> refresh(List<Listener> listeners) {
        PartitionKey key = listeners.get(0).partitionKey();
        long worker = listeners.get(0).workerId();
        ArrayDeque<String> candidates = placement.askOrder(key, worker, manager.getNodes(), manager.getNodeId());
        return firstServing(key, worker, candidates, false, true).transform(ar -> {
            if (ar.failed()) {
                return Future.succeededFuture();
            }
            LOG.info(
                    "instance {} in {} is served here without its history and node {} has it: taking its copy",
                    Long.toUnsignedString(worker),
                    key.dumpKey(),
                    ar.result());
            return local.letGo(listeners).compose(v -> {
                List<Listener> remote = remoteListeners(worker);
                return remote.isEmpty() ? Future.succeededFuture() : takeOver(remote);
            });
        });
    }

    /** The instance's listeners when every one of them is remote here, else none. */
    private List<Listener> remoteListeners(long worker) {
        List<Listener> out = new ArrayList<>();
        for (Listener l : registry.listeners()) {
            if (l.workerId() == worker) {
                if (l.state() != ListenerState.REMOTE) {
                    return List.of();
                }
                out.add(l);
            }
        }
        return out;
    }

    /**
     * A cold start's restore of the instances this node's data directory has the history of, before any pass: an
     * instance no live node serves with its history (the node that came up first registered it with nothing) is
     * installed here from the file and its engine replays what it published since; the others are left to the
     * hand-over, whose copies are newer. Installed here whether or not this node holds the shard: a holder without
     * the history takes it from here, and only then does this node let go.
     */
    public Future<Void> restore(List<InstanceHistory> histories) {
        Future<Void> chain = Future.succeededFuture();
        for (InstanceHistory h : histories) {
            chain = chain.compose(v -> restore(h).recover(t -> {
                LOG.warn(
                        "restoring instance {} from the data directory failed; the hand-over brings what other nodes"
                                + " have: {}",
                        Long.toUnsignedString(h.workerId()),
                        t.getMessage());
                return Future.succeededFuture();
            }));
        }
        return chain;
    }

    private Future<Void> restore(InstanceHistory h) {
        List<Listener> remote = remoteListeners(h.workerId());
        if (remote.isEmpty()) {
            return Future.succeededFuture();
        }
        ArrayDeque<String> candidates =
                placement.askOrder(h.key(), h.workerId(), manager.getNodes(), manager.getNodeId());
        return firstServing(h.key(), h.workerId(), candidates, false, true).transform(ar -> {
            if (ar.succeeded()) {
                return Future.succeededFuture();
            }
            LOG.info(
                    "no live node serves instance {} in {} with its history: restoring it from the data directory",
                    Long.toUnsignedString(h.workerId()),
                    h.key().dumpKey());
            return local.restore(remote, hosted -> hosted.recover(h.snapshot()));
        });
    }

    /** Every live node answered that it does not serve the instance. */
    private static final class NobodyServes extends RuntimeException {
        NobodyServes(long worker) {
            super("no live node serves instance " + Long.toUnsignedString(worker), null, false, false);
        }
    }

    /**
     * The first candidate that serves the instance; {@link NobodyServes} only when every one answered no, so a node
     * that could not be asked never makes the instance look lost.
     */
    private Future<String> firstServing(
            PartitionKey key, long worker, ArrayDeque<String> candidates, boolean unanswered, boolean withHistory) {
        String node = candidates.poll();
        if (node == null) {
            return Future.failedFuture(
                    unanswered
                            ? new IllegalStateException("not every live node could say whether " + "it serves instance "
                                    + Long.toUnsignedString(worker))
                            : new NobodyServes(worker));
        }
        Future<Boolean> serves =
                withHistory ? queries.servesWithHistory(node, key, worker) : queries.serves(node, key, worker);
        return serves.transform(ar -> ar.succeeded() && ar.result()
                ? Future.succeededFuture(node)
                : firstServing(key, worker, candidates, unanswered || ar.failed(), withHistory));
    }

    /** Stops listening and drops the instance's blocks once every current holder of its shard serves it. */
    private Future<Void> letGo(List<Listener> listeners) {
        Listener first = listeners.get(0);
        PartitionKey key = first.partitionKey();
        long worker = first.workerId();
        List<String> holders = new ArrayList<>(placement.holders(key, worker));
        holders.retainAll(manager.getNodes());
        if (holders.isEmpty() || holders.contains(manager.getNodeId())) {
            return Future.succeededFuture();
        }
        // A copy with history goes only once every holder has the history too: one that came up without it takes
        // it from here first.
        boolean history = registry.servesWithHistory(worker);
        List<Future<Boolean>> asks = new ArrayList<>();
        for (String node : holders) {
            asks.add((history ? queries.servesWithHistory(node, key, worker) : queries.serves(node, key, worker))
                    .otherwise(false));
        }
        return Future.all(asks).compose(all -> {
            for (int i = 0; i < asks.size(); i++) {
                if (!asks.get(i).result()) {
                    return Future.succeededFuture();
                }
            }
            LOG.info(
                    "letting go of the shard of instance {} in {}: {} serve it",
                    Long.toUnsignedString(worker),
                    key.dumpKey(),
                    holders);
            return local.letGo(listeners);
        });
    }
}
