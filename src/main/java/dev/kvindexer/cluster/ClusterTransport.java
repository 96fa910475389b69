package dev.kvindexer.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.net.NetworkBudget;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;

/**
 * The two ports a clustered node opens to the others, hardened against whoever else reaches them. The Hazelcast
 * member bounds every packet before it allocates it ({@link MemberGuard}); the event bus bounds every frame before
 * Vert.x buffers it ({@link BusFrameGuard}) and, under an auth token, speaks mutual TLS with a key derived from the
 * token ({@link BusKeys}), so only holders of the token exchange a byte with it. Every member also holds the token's
 * seal for values stored in the cluster ({@link SealedBytes}).
 */
public final class ClusterTransport {
    /** The member attribute Vert.x reads its node id from when it is handed a running member. */
    private static final String VERTX_NODE_ID = "__vertx.nodeId";

    private final HazelcastInstance member;
    private final HazelcastClusterManager manager;
    private final BusFrameGuard busGuard;
    private final BusKeys busKeys;
    private final ClusterConfig settings;

    private ClusterTransport(
            HazelcastInstance member, BusFrameGuard busGuard, BusKeys busKeys, ClusterConfig settings) {
        this.member = member;
        this.manager = new OwningClusterManager(member);
        this.busGuard = busGuard;
        this.busKeys = busKeys;
        this.settings = settings;
    }

    /**
     * Starts this node's Hazelcast member (it joins the cluster); blocking. {@code recoveryMaxBytes} bounds the
     * largest snapshot a node takes, and so the largest bus message ({@link BusFrameGuard#limit}); what both ports
     * hold for their peers is reserved from {@code budget}.
     */
    public static ClusterTransport open(
            ClusterConfig settings,
            String authToken,
            long recoveryMaxBytes,
            ClusterCounters counters,
            NetworkBudget budget,
            java.time.Duration frameTimeout) {
        Config config = HazelcastConfigs.load(settings);
        // Vert.x does both when it starts the member itself: its own shutdown runs first, and it needs its id.
        config.setProperty("hazelcast.shutdownhook.enabled", "false");
        config.getMemberAttributeConfig()
                .setAttribute(VERTX_NODE_ID, UUID.randomUUID().toString());
        SealedBytes.install(config, authToken, counters);
        BusKeys keys = authToken == null ? null : BusKeys.derive(authToken);
        int busLimit =
                BusFrameGuard.limit(recoveryMaxBytes, Runtime.getRuntime().maxMemory());
        BusFrameGuard busGuard = new BusFrameGuard(busLimit, keys != null, counters, budget, frameTimeout);
        return new ClusterTransport(MemberGuard.start(config, counters, budget), busGuard, keys, settings);
    }

    public HazelcastClusterManager manager() {
        return manager;
    }

    /** Builds the clustered Vert.x on this member; the member is shut down (off the caller's thread) when that fails. */
    public Future<Vertx> start(VertxBuilder builder, VertxOptions options) {
        EventBusOptions bus =
                options.getEventBusOptions().setHost(settings.host()).setPort(settings.busPort());
        if (busKeys != null) {
            busKeys.secure(bus);
        }
        return builder.with(options)
                .withClusterManager(manager)
                .withTransport(new GuardedTransport(busGuard))
                .buildClustered()
                .onFailure(t -> new Thread(() -> shutdown(member), "kvindexer-member-shutdown").start());
    }

    private static void shutdown(HazelcastInstance member) {
        while (member.getLifecycleService().isRunning()) {
            try {
                member.getLifecycleService().shutdown();
            } catch (RejectedExecutionException busy) {
                Thread.onSpinWait();
            }
        }
    }

    /** Vert.x leaves a member it was handed running; this node owns its member, so leaving shuts it down too. */
    private static final class OwningClusterManager extends HazelcastClusterManager {
        private final HazelcastInstance member;
        private Vertx vertx;

        OwningClusterManager(HazelcastInstance member) {
            super(member);
            this.member = member;
        }

        @Override
        public void init(Vertx vertx) {
            super.init(vertx);
            this.vertx = vertx;
        }

        @Override
        public void leave(Completable<Void> promise) {
            super.leave((ignored, failure) -> vertx.<Void>executeBlocking(
                            () -> {
                                shutdown(member);
                                return null;
                            },
                            false)
                    .onComplete(shut -> promise.complete(null, failure != null ? failure : shut.cause())));
        }
    }
}
