package dev.kvindexer.cluster;

import dev.kvindexer.ingest.Listener;
import dev.kvindexer.partition.PartitionKey;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.RegistrationService;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.registry.RegistryException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster-wide registrations: {@code /register} and {@code /unregister} on any node apply on every node, and each
 * node runs its own listeners, so every replica holds the full state.
 *
 * <p>A cluster-wide map from (instance, dp_rank) to the registration is the truth. A change is written there first,
 * then announced by key on a cluster-wide address; every node then reconciles that key: it reads the map and
 * registers, re-registers or unregisters locally until it agrees. Reconciling is idempotent and always reads the
 * latest value, and each node runs its reconciles and its own changes one at a time, so the order in which
 * announcements arrive does not matter. A joining node subscribes to announcements before it reads the whole map.
 */
public final class ClusterRegistrar implements Registrar {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterRegistrar.class);
    static final String MAP = "kvindexer.registrations";
    static final String CHANGED = "kvindexer.registry.changed";

    private final Vertx vertx;
    private final RegistrationService local;
    private final Registry registry;
    private final SerialQueue queue = new SerialQueue();
    private AsyncMap<String, String> map;
    private MessageConsumer<String> consumer;

    public ClusterRegistrar(Vertx vertx, RegistrationService local) {
        this.vertx = vertx;
        this.local = local;
        this.registry = local.registry();
    }

    /** Subscribes to changes, then applies every registration the cluster already has (before recovery). */
    public Future<Void> start() {
        return vertx.sharedData().<String, String>getAsyncMap(MAP)
                .compose(m -> {
                    map = m;
                    consumer = vertx.eventBus().consumer(CHANGED, msg -> reconcile(msg.body()));
                    return consumer.completion();
                })
                .compose(v -> map.keys())
                .compose(keys -> {
                    List<Future<Void>> all = new ArrayList<>();
                    keys.forEach(k -> all.add(reconcile(k)));
                    LOG.info("joined the cluster registry with {} registrations", keys.size());
                    return Future.join(all).mapEmpty();
                });
    }

    public Future<Void> stop() {
        return consumer == null ? Future.succeededFuture() : consumer.unregister();
    }

    @Override
    public Future<Void> register(RegisterRequest r) {
        String key = key(r.instanceId(), r.dpRank());
        return queue.submit(() -> {
            try {
                registry.checkRegister(r);
            } catch (RegistryException e) {
                return Future.failedFuture(e);
            }
            return map.putIfAbsent(key, encode(r)).compose(previous -> {
                if (previous != null) {
                    // Registered through another node a moment ago; this node has not reconciled it yet.
                    return Future.failedFuture(Registry.duplicate(r.instanceId(), r.dpRank()));
                }
                return local.register(r)
                        .recover(t -> map.remove(key).transform(ignored -> Future.failedFuture(t)))
                        .onComplete(ignored -> announce(key));
            });
        });
    }

    @Override
    public Future<Void> unregister(long instanceId, String modelName, String tenantId, Integer dpRank) {
        return queue.submit(() -> {
            List<Integer> ranks;
            try {
                ranks = registry.ranksToUnregister(instanceId, modelName, tenantId, dpRank);
            } catch (RegistryException e) {
                return Future.failedFuture(e);
            }
            List<Future<String>> removals = new ArrayList<>();
            ranks.forEach(rank -> removals.add(map.remove(key(instanceId, rank))));
            return Future.all(removals)
                    .compose(v -> local.unregister(instanceId, modelName, tenantId, dpRank))
                    .onComplete(ignored -> ranks.forEach(rank -> announce(key(instanceId, rank))));
        });
    }

    private void announce(String key) {
        vertx.eventBus().publish(CHANGED, key);
    }

    /** Makes this node's registration of {@code key} match the cluster map. Never fails: a conflict is logged. */
    Future<Void> reconcile(String key) {
        return queue.<Void>submit(() -> map.get(key).compose(value -> apply(key, value)))
                .recover(t -> {
                    LOG.error("cluster registration {} cannot be applied on this node: {}", key, t.getMessage());
                    return Future.succeededFuture();
                });
    }

    private Future<Void> apply(String key, String value) {
        int colon = key.lastIndexOf(':');
        long instanceId = Long.parseUnsignedLong(key.substring(0, colon));
        int dpRank = Integer.parseInt(key.substring(colon + 1));
        Listener current = registry.listener(instanceId, dpRank);
        RegisterRequest wanted = value == null ? null : decode(value);
        if (wanted != null && current != null && sameRegistration(current, wanted)) {
            return Future.succeededFuture();
        }
        Future<Void> removed = current == null ? Future.succeededFuture()
                : local.unregister(instanceId, current.partitionKey().modelName(), current.partitionKey().tenantId(), dpRank);
        return wanted == null ? removed : removed.compose(v -> local.register(wanted));
    }

    private static boolean sameRegistration(Listener l, RegisterRequest r) {
        return l.endpoint().equals(r.endpoint()) && Objects.equals(l.replayEndpoint(), r.replayEndpoint())
                && l.partitionKey().equals(r.partition()) && l.blockSize() == r.blockSize();
    }

    static String key(long instanceId, int dpRank) {
        return Long.toUnsignedString(instanceId) + ":" + dpRank;
    }

    static String encode(RegisterRequest r) {
        return new JsonObject()
                .put("instance_id", Long.toUnsignedString(r.instanceId()))
                .put("dp_rank", r.dpRank())
                .put("endpoint", r.endpoint())
                .put("replay_endpoint", r.replayEndpoint())
                .put("model_name", r.partition().modelName())
                .put("tenant_id", r.partition().tenantId())
                .put("block_size", r.blockSize())
                .encode();
    }

    static RegisterRequest decode(String json) {
        JsonObject o = new JsonObject(json);
        return new RegisterRequest(Long.parseUnsignedLong(o.getString("instance_id")), o.getInteger("dp_rank"),
                o.getString("endpoint"), o.getString("replay_endpoint"),
                new PartitionKey(o.getString("model_name"), o.getString("tenant_id")), o.getInteger("block_size"));
    }
}
