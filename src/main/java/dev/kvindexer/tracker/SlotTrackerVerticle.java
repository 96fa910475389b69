package dev.kvindexer.tracker;

import dev.kvindexer.config.NetworkConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.load.LoadEvent;
import dev.kvindexer.load.SlotTracker;
import dev.kvindexer.metrics.PrometheusText;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.selectservice.replication.ReplicaPeerRoutes;
import dev.kvindexer.selectservice.replication.ReplicaSync;
import dev.kvindexer.web.HttpEdge;
import dev.kvindexer.web.JsonBinding;
import dev.kvindexer.web.JsonRoutes;
import dev.kvindexer.web.RequestPreamble;
import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The slot tracker's HTTP adapter (docs/api/slot-tracker.md): Dynamo's routes, codes and bodies over a {@link SlotTracker} that only
 * this verticle's context touches, plus /metrics and the periodic stale-request cleanup. Deploy one instance.
 */
public final class SlotTrackerVerticle extends VerticleBase {
    /** The most sequence hashes a peer's event may carry (Dynamo's requests are bounded by the body limit). */
    private static final int REPLICA_MAX_BLOCKS = 256 * 1024;

    private final SlotTrackerConfig config;
    private final SlotTracker tracker;
    private final TrackerMetrics metrics = new TrackerMetrics();
    /** What clients' bodies hold, sized as a node's budget. */
    private final NetworkBudget network =
            new NetworkBudget(NetworkConfig.defaults().maxBytes());

    private final Supplier<String> micrometer;
    private final Buffer openApi = JsonRoutes.openApiDocument("slot-tracker.json");
    private HttpEdge server;
    private long cleanupTimer = -1;
    /** Dynamo's replica sync of active requests with peer trackers; null while off. */
    private ReplicaSync replicas;

    /** @param micrometer the JVM and Vert.x meters' text for /metrics (the Vert.x this verticle runs on) */
    public SlotTrackerVerticle(SlotTrackerConfig config, Supplier<String> micrometer) {
        this.config = config;
        this.micrometer = micrometer;
        this.tracker = new SlotTracker(config.requestTtlMillis());
    }

    @Override
    public Future<?> start() {
        cleanupTimer = vertx.setPeriodic(config.cleanupIntervalMillis(), id -> metrics.expired(tracker.expireStale()));
        if (config.replicaSyncPort() > 0) {
            // As Dynamo's: events carry the process's random id, so each replica drops its own.
            replicas = ReplicaSync.start(
                    config.replicaSyncPort(),
                    config.replicaSyncPeers(),
                    ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE),
                    REPLICA_MAX_BLOCKS,
                    network,
                    context,
                    tracker::applyReplica);
        }
        return HttpEdge.listen(vertx, router(), config.http(), SecurityConfig.NONE, config.host(), config.port())
                .onSuccess(edge -> server = edge);
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(cleanupTimer);
        if (replicas != null) {
            replicas.close();
        }
        return server == null ? Future.succeededFuture() : server.close();
    }

    /** The bound port (differs from the configured one when that was 0). */
    public int actualPort() {
        return server.actualPort();
    }

    /** Every route this service serves (package-private for the OpenAPI coverage test). */
    Router router() {
        Router router = Router.router(vertx);
        RequestPreamble preamble = RequestPreamble.install(
                router,
                "other",
                (route, method, status, nanos) -> metrics.answered(route, status),
                null,
                false,
                network,
                JsonRoutes.DEFAULT_BODY_LIMIT);
        JsonRoutes.serveHealth(router, ctx -> ctx.response().setStatusCode(200).end());
        JsonRoutes.serveOpenApi(router, openApi);
        router.get("/metrics").handler(this::serveMetrics);
        registerWorkerRoutes(router);
        registerRequestRoutes(router);
        registerLoadRoutes(router);
        ReplicaPeerRoutes.install(
                router,
                () -> replicas,
                (path, handler) -> JsonRoutes.post(router, path, JsonRoutes.DEFAULT_BODY_LIMIT, handler));
        JsonRoutes.answerFailures(router, ctx -> "route not found", ctx -> "method not allowed");
        preamble.labelRoutes(router);
        return router;
    }

    private void serveMetrics(RoutingContext ctx) {
        ctx.response()
                .setStatusCode(200)
                .putHeader("content-type", PrometheusText.CONTENT_TYPE)
                .end(metrics.render(tracker.activeRequests(), tracker.trackedWorkers(), micrometer.get()));
    }

    /** {@code /register}, {@code /unregister} and {@code /workers}. */
    private void registerWorkerRoutes(Router router) {
        post(
                router,
                "/register",
                201,
                SlotTrackerRequests.Register.class,
                body -> tracker.register(
                        body.scope(), body.workerId(), body.blockSize(), body.dpStart(), body.dpSize()));
        post(
                router,
                "/unregister",
                200,
                SlotTrackerRequests.Unregister.class,
                body -> tracker.unregister(body.scope(), body.workerId()));
        router.get("/workers").handler(this::listWorkers);
    }

    private void listWorkers(RoutingContext ctx) {
        Responses.answer(ctx, 200, tracker.workers(param(ctx, "model_name"), routingGroupFilter(ctx)));
    }

    /** {@code /add}, {@code /prefill_complete} and {@code /free}: a request's life on a worker's rank. */
    private void registerRequestRoutes(Router router) {
        post(router, "/add", 201, SlotTrackerRequests.Add.class, this::addRequest);
        post(
                router,
                "/prefill_complete",
                200,
                SlotTrackerRequests.RequestChange.class,
                body -> changeRequest(body, tracker::prefillComplete, LoadEvent.PrefillCompleted::new));
        post(
                router,
                "/free",
                200,
                SlotTrackerRequests.RequestChange.class,
                body -> changeRequest(body, tracker::free, LoadEvent.Freed::new));
    }

    /** Adds the request a body names, then tells the peer trackers. */
    private void addRequest(SlotTrackerRequests.Add body) {
        PartitionKey key = body.scope();
        String id = body.requestId();
        long worker = body.workerId();
        long rank = body.dpRank();
        long[] hashes = body.sequenceHashes();
        long newTokens = body.newIslTokens();
        tracker.add(key, id, worker, rank, hashes, newTokens);
        if (replicas != null) {
            replicas.publish(new LoadEvent.Added(
                    key, tracker.blockSize(key), id, worker, (int) rank, null, hashes, newTokens > 0, null, newTokens));
        }
    }

    /** {@code /loads} and {@code /potential_loads}. */
    private void registerLoadRoutes(Router router) {
        router.get("/loads").handler(this::listLoads);
        JsonRoutes.post(router, "/potential_loads", JsonRoutes.DEFAULT_BODY_LIMIT, this::potentialLoads);
    }

    private void listLoads(RoutingContext ctx) {
        Responses.answer(ctx, 200, tracker.loads(param(ctx, "model_name"), routingGroupFilter(ctx)));
    }

    private void potentialLoads(RoutingContext ctx) {
        SlotTrackerRequests.PotentialLoads body = JsonBinding.bind(ctx, SlotTrackerRequests.PotentialLoads.class);
        PartitionKey scope = body.scope();
        long[] hashes = body.sequenceHashes();
        long newTokens = body.newIslTokens();
        Responses.answer(ctx, 200, tracker.potentialLoads(scope, hashes, newTokens));
    }

    /**
     * A change to the request a body names ({@code /prefill_complete}, {@code /free}), then told to the peer trackers
     * as where the request was added; a request this tracker does not hold is told to nobody.
     */
    private void changeRequest(
            SlotTrackerRequests.RequestChange body,
            java.util.function.BiConsumer<PartitionKey, String> change,
            RequestEvent event) {
        PartitionKey key = body.scope();
        String id = body.requestId();
        long[] placed = tracker.placement(key, id);
        int blockSize = tracker.blockSize(key);
        change.accept(key, id);
        if (replicas != null && placed != null) {
            replicas.publish(event.of(key, blockSize, id, placed[0], (int) placed[1], null));
        }
    }

    /** The shape of {@link LoadEvent.PrefillCompleted} and {@link LoadEvent.Freed}. */
    private interface RequestEvent {
        LoadEvent of(PartitionKey key, int blockSize, String requestId, long workerId, int dpRank, String loraName);
    }

    /** A write route: the body is read in full (a bad one changes nothing), then the operation answers {"status":"ok"}. */
    private static <T> void post(Router router, String path, int status, Class<T> type, Consumer<T> operation) {
        JsonRoutes.post(router, path, JsonRoutes.DEFAULT_BODY_LIMIT, ctx -> {
            T body = JsonBinding.bind(ctx, type);
            operation.accept(body);
            Responses.json(ctx, status, Responses.OK);
        });
    }

    /** {@code ?routing_group=}, or an older client's {@code ?tenant_id=}; null (no filter) without either. */
    private static String routingGroupFilter(RoutingContext ctx) {
        String routingGroup = param(ctx, "routing_group");
        return routingGroup != null ? routingGroup : param(ctx, "tenant_id");
    }

    private static String param(RoutingContext ctx, String name) {
        return ctx.queryParams().get(name);
    }
}
