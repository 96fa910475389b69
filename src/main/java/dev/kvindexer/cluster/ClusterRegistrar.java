package dev.kvindexer.cluster;

import dev.kvindexer.ingest.Listener;
import dev.kvindexer.partition.PartitionKey;
import dev.kvindexer.registry.Publisher;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.RegistrationService;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.registry.RegistryException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.spi.cluster.ClusterManager;
import java.util.ArrayList;
import java.util.List;
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
 * <p>The answer to /register or /unregister waits until every live node acknowledged (or {@link #ACK_TIMEOUT_MS}
 * passed), so a router that registers through one replica can query any other right away. The wait happens outside
 * the serial queue: two nodes announcing to each other at once never wait on each other's queue.
 */
public final class ClusterRegistrar implements Registrar {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterRegistrar.class);
    static final String MAP = "kvindexer.registrations";
    /** Followed by a node id: where that node takes announcements. */
    static final String CHANGED_PREFIX = "kvindexer.registry.changed.";
    static final long ACK_TIMEOUT_MS = 5_000;

    private final Vertx vertx;
    private final ClusterManager manager;
    private final RegistrationService local;
    private final Registry registry;
    private final SerialQueue queue = new SerialQueue();
    private AsyncMap<String, String> map;
    private MessageConsumer<String> consumer;

    public ClusterRegistrar(Vertx vertx, ClusterManager manager, RegistrationService local) {
        this.vertx = vertx;
        this.manager = manager;
        this.local = local;
        this.registry = local.registry();
    }

    /** Subscribes to changes, then applies every registration the cluster already has (before recovery). */
    public Future<Void> start() {
        return vertx.sharedData().<String, String>getAsyncMap(MAP)
                .compose(m -> {
                    map = m;
                    consumer = vertx.eventBus().consumer(CHANGED_PREFIX + manager.getNodeId(),
                            msg -> reconcile(msg.body()).onComplete(done -> msg.reply(null)));
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
        // Other nodes need telling only when the map was written (even if rolled back since); a refusal changed nothing.
        boolean[] written = {false};
        Future<Void> applied = queue.submit(() -> {
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
                written[0] = true;
                return local.register(r).recover(t -> map.remove(key).transform(ignored -> Future.failedFuture(t)));
            });
        });
        return applied.eventually(() -> written[0] ? announce(List.of(key)) : Future.succeededFuture());
    }

    @Override
    public Future<Void> unregister(long instanceId, String modelName, String tenantId, Integer dpRank) {
        List<String> keys = new ArrayList<>();
        Future<Void> applied = queue.submit(() -> {
            try {
                registry.ranksToUnregister(instanceId, modelName, tenantId, dpRank).forEach(rank -> keys.add(key(instanceId, rank)));
            } catch (RegistryException e) {
                return Future.failedFuture(e);
            }
            List<Future<String>> removals = new ArrayList<>();
            keys.forEach(k -> removals.add(map.remove(k)));
            return Future.all(removals).compose(v -> local.unregister(instanceId, modelName, tenantId, dpRank));
        });
        return applied.eventually(() -> announce(keys));
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
                acks.add(vertx.eventBus().request(CHANGED_PREFIX + node, key, options).<Void>mapEmpty().recover(t -> {
                    if (t instanceof ReplyException && ((ReplyException) t).failureType() == ReplyFailure.NO_HANDLERS) {
                        // Still joining: the node reads the whole map once it has subscribed.
                        LOG.debug("node {} is not subscribed yet for registration change {}", node, key);
                    } else {
                        LOG.warn("node {} did not acknowledge registration change {}: {}", node, key, t.getMessage());
                    }
                    return Future.succeededFuture();
                }));
            }
        }
        return Future.join(acks).mapEmpty();
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
        if (wanted != null && current != null && wanted.sameAs(current)) {
            return Future.succeededFuture();
        }
        Future<Void> removed = current == null ? Future.succeededFuture()
                : local.unregister(instanceId, current.partitionKey().modelName(), current.partitionKey().tenantId(), dpRank);
        return wanted == null ? removed : removed.compose(v -> local.register(wanted));
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
                .put("instance_name", r.publisher().name())
                .put("type", r.publisher().type())
                .put("lora_name", r.publisher().defaultLora())
                .put("additional_salt", r.publisher().additionalSalt())
                .encode();
    }

    static RegisterRequest decode(String json) {
        JsonObject o = new JsonObject(json);
        return new RegisterRequest(Long.parseUnsignedLong(o.getString("instance_id")), o.getInteger("dp_rank"),
                o.getString("endpoint"), o.getString("replay_endpoint"),
                new PartitionKey(o.getString("model_name"), o.getString("tenant_id")), o.getInteger("block_size"),
                new Publisher(o.getString("instance_name"), o.getString("type"), o.getString("lora_name"),
                        o.getString("additional_salt")));
    }
}
