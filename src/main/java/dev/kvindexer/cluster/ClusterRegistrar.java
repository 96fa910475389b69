package dev.kvindexer.cluster;

import dev.kvindexer.event.Refusal;
import dev.kvindexer.event.WorkerRank;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.spi.cluster.ClusterManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster-wide registrations: {@code /register} and {@code /unregister} on any node apply on every node, and each
 * node runs its own listeners, so every replica holds the full state.
 *
 * <p>A cluster-wide map from (instance, dp_rank) to the registration is the truth. A change is written there first,
 * then announced by key to every other node, which reconciles that key: it reads the map and registers,
 * re-registers or unregisters locally until it agrees. Reconciling is idempotent and always reads the latest value,
 * and each node runs its reconciles and its own changes one at a time, so the order in which announcements arrive
 * does not matter. A joining node subscribes to announcements before it reads the whole map.
 *
 * <p>Announcements can be missed and map entries can be lost with the members that held them, so each node also
 * reconciles everything it holds ({@link #reconcileAll}, anti-entropy). A registration this node holds that the map
 * lacks is then either one unregistered elsewhere or one the map lost. An unregistration leaves a tombstone under
 * the key, kept {@link #TOMBSTONE_TTL}, far longer than any reconcile period, which decides it: with a tombstone the
 * local registration is an orphan and goes, with its blocks; without one the map lost it, and this node writes it
 * back from its own state. The tombstone is written before the key is removed and read after the map, so a reconcile
 * that misses the key always sees the tombstone.
 *
 * <p>The answer to /register or /unregister waits until every live node acknowledged (or {@link #ACK_TIMEOUT_MS}
 * passed), so a router that registers through one replica can query any other right away. The wait happens outside
 * the serial queue: two nodes announcing to each other at once never wait on each other's queue.
 */
public final class ClusterRegistrar implements Registrar {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterRegistrar.class);
    static final String MAP = "kvindexer.registrations";
    static final String TOMBSTONES = "kvindexer.tombstones";
    static final Duration TOMBSTONE_TTL = Duration.ofHours(1);
    /** Followed by a node id: where that node takes announcements. */
    static final String CHANGED_PREFIX = "kvindexer.registry.changed.";

    static final long ACK_TIMEOUT_MS = 5_000;
    /** The {@code action} labels of {@link ClusterCounters#repaired}. */
    public static final String REGISTERED = "registered";

    public static final String REPLACED = "replaced";
    public static final String UNREGISTERED = "unregistered";
    public static final String REWRITTEN = "rewritten";

    private final Vertx vertx;
    private final ClusterManager manager;
    private final LocalRegistrar local;
    private final Registry registry;
    private final ClusterValues values;
    private final ClusterCounters counters;
    private final SerialQueue queue = new SerialQueue();
    private AsyncMap<Object, Object> map;
    private AsyncMap<Object, Object> tombstones;
    private MessageConsumer<Object> consumer;

    public ClusterRegistrar(
            Vertx vertx, ClusterManager manager, LocalRegistrar local, ClusterValues values, ClusterCounters counters) {
        this.vertx = vertx;
        this.manager = manager;
        this.local = local;
        this.registry = local.registry();
        this.values = values;
        this.counters = counters;
    }

    /** Subscribes to changes, then applies every registration the cluster already has (before recovery). */
    public Future<Void> start() {
        return vertx.sharedData()
                .getAsyncMap(MAP)
                .compose(m -> {
                    map = m;
                    return vertx.sharedData().getAsyncMap(TOMBSTONES);
                })
                .compose(t -> {
                    tombstones = t;
                    consumer = vertx.eventBus().consumer(CHANGED_PREFIX + manager.getNodeId(), msg -> {
                        String key = values.announced(msg.body());
                        Future<Void> done = key == null ? Future.succeededFuture() : reconcile(key);
                        done.onComplete(ignored -> msg.reply(null));
                    });
                    return consumer.completion();
                })
                // Joining: applying everything is the point, not a repair.
                .compose(v -> reconcileAll(false))
                .onSuccess(v -> LOG.info(
                        "joined the cluster registry with {} registrations",
                        registry.listeners().size()));
    }

    public Future<Void> stop() {
        return consumer == null ? Future.succeededFuture() : consumer.unregister();
    }

    @Override
    public Future<Void> register(RegisterRequest r) {
        String key = ClusterValues.key(r.workerId(), r.dpRank());
        // Other nodes need telling only when the map was written (even if rolled back since); a refusal changed
        // nothing.
        boolean[] written = {false};
        Future<Void> applied = queue.submit(() -> {
            try {
                registry.checkRegister(r);
            } catch (Refusal e) {
                return Future.failedFuture(e);
            }
            return map.putIfAbsent(key, values.registration(r)).compose(previous -> {
                if (previous != null) {
                    // Registered through another node a moment ago; this node has not reconciled it yet.
                    return Future.failedFuture(Registry.duplicate(r.workerId(), r.dpRank()));
                }
                written[0] = true;
                // After the write: a reconcile that finds neither key nor tombstone must not see the old tombstone.
                return tombstones
                        .remove(key)
                        .<Void>mapEmpty()
                        .compose(v -> local.register(r)
                                .recover(t -> withdraw(key).transform(ignored -> Future.failedFuture(t))));
            });
        });
        return applied.eventually(() -> written[0] ? announce(List.of(key)) : Future.succeededFuture());
    }

    @Override
    public Future<Void> unregister(long workerId, String modelName, String routingGroup, Integer dpRank) {
        List<String> keys = new ArrayList<>();
        Future<Void> applied = queue.submit(() -> {
            try {
                registry.ranksToUnregister(workerId, modelName, routingGroup, dpRank)
                        .forEach(rank -> keys.add(ClusterValues.key(workerId, rank)));
            } catch (Refusal e) {
                return Future.failedFuture(e);
            }
            List<Future<Void>> removals = new ArrayList<>();
            keys.forEach(k -> removals.add(withdraw(k)));
            return Future.all(removals).compose(v -> local.unregister(workerId, modelName, routingGroup, dpRank));
        });
        return applied.eventually(() -> announce(keys));
    }

    /** Removes a registration from the map, tombstone first (see the class comment). */
    private Future<Void> withdraw(String key) {
        return tombstones
                .put(key, values.tombstone(key, System.currentTimeMillis()), TOMBSTONE_TTL.toMillis())
                .compose(v -> map.remove(key))
                .mapEmpty();
    }

    /** Tells every other live node to reconcile the keys; completes when all answered or timed out. Never fails. */
    private Future<Void> announce(List<String> keys) {
        DeliveryOptions options = new DeliveryOptions().setSendTimeout(ACK_TIMEOUT_MS);
        List<Future<Void>> acks = new ArrayList<>();
        String self = manager.getNodeId();
        for (String node : manager.getNodes()) {
            if (node.equals(self)) {
                continue;
            }
            for (String key : keys) {
                acks.add(vertx.eventBus()
                        .request(CHANGED_PREFIX + node, values.announcement(key), options)
                        .<Void>mapEmpty()
                        .recover(t -> {
                            if (t instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS) {
                                // Still joining: the node reads the whole map once it has subscribed.
                                LOG.debug("node {} is not subscribed yet for registration change {}", node, key);
                            } else {
                                LOG.warn(
                                        "node {} did not acknowledge registration change {}: {}",
                                        node,
                                        key,
                                        t.getMessage());
                            }
                            return Future.succeededFuture();
                        }));
            }
        }
        return Future.join(acks).mapEmpty();
    }

    /** Makes this node's registration of {@code key} match the cluster map. Never fails: a conflict is logged. */
    Future<Void> reconcile(String key) {
        List<String> rewritten = new ArrayList<>();
        return queue.<Void>submit(() -> map.get(key).compose(value -> settle(key, value, false, rewritten)))
                .recover(t -> {
                    LOG.error("cluster registration {} cannot be applied on this node: {}", key, t.getMessage());
                    return Future.succeededFuture();
                })
                .eventually(() -> announce(rewritten));
    }

    /**
     * Anti-entropy: makes every registration of this node, and every one in the map, agree, as described in the class
     * comment; what it had to change is counted as a repair. Never fails.
     */
    public Future<Void> reconcileAll() {
        return reconcileAll(true);
    }

    private Future<Void> reconcileAll(boolean countRepairs) {
        List<String> rewritten = new ArrayList<>();
        return queue.<Void>submit(() -> map.entries().compose(entries -> {
                    TreeSet<String> keys = new TreeSet<>();
                    for (Object k : entries.keySet()) {
                        if (values.registrationKey(k instanceof String s ? s : null, ClusterValues.REGISTRATIONS)
                                != null) {
                            keys.add((String) k);
                        }
                    }
                    registry.listeners().forEach(l -> keys.add(ClusterValues.key(l.workerId(), l.dpRank())));
                    Future<Void> chain = Future.succeededFuture();
                    for (String key : keys) {
                        chain = chain.compose(v -> settle(key, entries.get(key), countRepairs, rewritten)
                                .recover(t -> {
                                    LOG.error(
                                            "cluster registration {} cannot be applied on this node: {}",
                                            key,
                                            t.getMessage());
                                    return Future.succeededFuture();
                                }));
                    }
                    return chain;
                }))
                .onSuccess(v -> counters.reconciled())
                .recover(t -> {
                    LOG.warn(
                            "reconciling with the cluster registry failed; the next reconcile retries: {}",
                            t.toString());
                    return Future.succeededFuture();
                })
                .eventually(() -> announce(rewritten));
    }

    /**
     * Settles one key given what the map holds under it ({@code value}, null when absent). A refused value changes
     * nothing here: neither applied nor taken as an unregistration. Keys this node wrote back are added to
     * {@code rewritten}, for the others to hear of; that is always a repair, other changes only when
     * {@code countRepairs} (a periodic or membership reconcile, where any difference means something was missed).
     * Runs on the queue.
     */
    private Future<Void> settle(String key, Object value, boolean countRepairs, List<String> rewritten) {
        WorkerRank k = values.registrationKey(key, ClusterValues.REGISTRATIONS);
        if (k == null) {
            return Future.succeededFuture();
        }
        Listener current = registry.listener(k.workerId(), k.dpRank());
        if (value != null) {
            RegisterRequest wanted = values.registration(key, value);
            return wanted == null ? Future.succeededFuture() : apply(current, wanted, countRepairs);
        }
        if (current == null) {
            return Future.succeededFuture();
        }
        return tombstones.get(key).compose(tombstone -> {
            if (tombstone != null && values.tombstone(key, tombstone)) {
                if (countRepairs) {
                    counters.repaired(UNREGISTERED);
                }
                LOG.info("registration {} was unregistered in the cluster; removing it here", key);
                return unregisterLocally(current);
            }
            RegisterRequest mine = RegisterRequest.of(current);
            return map.putIfAbsent(key, values.registration(mine)).compose(previous -> {
                if (previous == null) {
                    counters.repaired(REWRITTEN);
                    rewritten.add(key);
                    LOG.warn("the cluster map lost registration {} (no tombstone); wrote it back from this node", key);
                    return Future.succeededFuture();
                }
                RegisterRequest wanted = values.registration(key, previous);
                return wanted == null ? Future.succeededFuture() : apply(current, wanted, countRepairs);
            });
        });
    }

    private Future<Void> apply(Listener current, RegisterRequest wanted, boolean countRepairs) {
        if (current != null && wanted.sameAs(current)) {
            return Future.succeededFuture();
        }
        if (countRepairs) {
            counters.repaired(current == null ? REGISTERED : REPLACED);
        }
        Future<Void> removed = current == null ? Future.succeededFuture() : unregisterLocally(current);
        return removed.compose(v -> local.register(wanted));
    }

    private Future<Void> unregisterLocally(Listener l) {
        return local.unregister(
                l.workerId(), l.partitionKey().modelName(), l.partitionKey().routingGroup(), l.dpRank());
    }
}
