package dev.kvindexer.cli;

import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.metrics.Tracing;
import dev.kvindexer.metrics.VertxMeters;
import dev.kvindexer.tracker.SlotTrackerVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code slot-tracker}: Dynamo's standalone slot tracker service (docs/api/slot-tracker.md), on its own. */
@Command(
        name = "slot-tracker",
        mixinStandardHelpOptions = true,
        description =
                "Run the standalone slot tracker HTTP service (Dynamo compatible): active-request load per worker rank.")
public final class SlotTrackerCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(SlotTrackerCommand.class);

    // Defaults live in conf/slot-tracker.json; LayeredDefaults puts env KVINDEXER_SLOT_TRACKER_* and --config first.

    @Mixin
    HttpEdgeOptions edge = new HttpEdgeOptions();

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "JSON settings file, keys named as these options "
                    + "without dashes; flags and env win over it, it wins over conf/slot-tracker.json "
                    + "(env KVINDEXER_SLOT_TRACKER_CONFIG).")
    java.nio.file.Path config;

    @Option(
            names = "--request-ttl-seconds",
            description = "Active requests older than this are dropped "
                    + "(env KVINDEXER_SLOT_TRACKER_REQUEST_TTL_SECONDS; default: ${DEFAULT-VALUE}).")
    long requestTtlSeconds;

    @Option(
            names = "--cleanup-interval-seconds",
            description = "How often stale requests are looked for "
                    + "(env KVINDEXER_SLOT_TRACKER_CLEANUP_INTERVAL_SECONDS; default: ${DEFAULT-VALUE}).")
    long cleanupIntervalSeconds;

    @Option(
            names = "--replica-sync-port",
            description = "ZMQ PUB port for replica sync of active requests with peer trackers "
                    + "(env KVINDEXER_SLOT_TRACKER_REPLICA_SYNC_PORT; default: off).")
    Integer replicaSyncPort;

    @Option(
            names = "--replica-sync-peers",
            description = "Comma-separated ZMQ PUB endpoints of peer trackers; "
                    + "needs --replica-sync-port (env KVINDEXER_SLOT_TRACKER_REPLICA_SYNC_PEERS; default: none).")
    String replicaSyncPeers;

    SlotTrackerConfig config() {
        if (replicaSyncPort != null && replicaSyncPort == 0) {
            throw new IllegalArgumentException("--replica-sync-port must be between 1 and 65535");
        }
        return new SlotTrackerConfig(
                edge.host,
                edge.port,
                requestTtlSeconds * 1000,
                cleanupIntervalSeconds * 1000,
                edge.limits(),
                replicaSyncPort == null ? 0 : replicaSyncPort,
                SelectServiceCommand.list(replicaSyncPeers));
    }

    /**
     * Starts the service on {@code vertx} and returns it once it listens; blocking. {@code micrometer} is the text of
     * that Vert.x's JVM and Vert.x meters, which the tracker's /metrics shows after its own families.
     */
    public static SlotTrackerVerticle deploy(Vertx vertx, SlotTrackerConfig config, Supplier<String> micrometer)
            throws Exception {
        SlotTrackerVerticle verticle = new SlotTrackerVerticle(config, micrometer);
        vertx.deployVerticle(verticle).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return verticle;
    }

    @Override
    public Integer call() throws Exception {
        SlotTrackerConfig config;
        try {
            config = config();
        } catch (IllegalArgumentException e) {
            System.err.println("kvindexer slot-tracker: " + e.getMessage());
            return 2;
        }
        VertxMeters meters = new VertxMeters();
        VertxOptions options = new VertxOptions();
        Tracing tracing = Tracing.fromEnvironment();
        Vertx vertx = tracing.instrument(meters.instrument(Vertx.builder(), options), options)
                .build();
        SlotTrackerVerticle tracker;
        try {
            tracker = deploy(vertx, config, meters::scrape);
        } catch (Exception e) {
            System.err.println("kvindexer slot-tracker: startup failed: " + e.getMessage());
            vertx.close();
            tracing.close();
            return 1;
        }
        LOG.info("slot tracker listening on http://{}:{}", edge.host, tracker.actualPort());
        UntilShutdown.await(
                "slot-tracker-shutdown",
                () -> {
                    try {
                        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        LOG.debug("shutdown: {}", e.toString());
                    }
                    tracing.close();
                },
                java.time.Duration.ofSeconds(15));
        return 0;
    }
}
