package dev.kvindexer.selectservice;

import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.config.NetworkConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.metrics.PrometheusText;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.select.PendingSelections;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SelectionState;
import dev.kvindexer.select.SessionBindings;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.selectservice.replication.ClusterBindings;
import dev.kvindexer.selectservice.replication.ClusterLoad;
import dev.kvindexer.selectservice.replication.LocalReservations;
import dev.kvindexer.selectservice.replication.ReplicaPeerRoutes;
import dev.kvindexer.selectservice.replication.ReplicaSync;
import dev.kvindexer.selectservice.replication.SharedReservations;
import dev.kvindexer.web.BearerAuth;
import dev.kvindexer.web.HttpEdge;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonRequest;
import dev.kvindexer.web.JsonRoutes;
import dev.kvindexer.web.RequestPreamble;
import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Dynamo's standalone selection service over HTTP (docs/api/selection.md): it assembles the selection state, the embedded index
 * behind {@link IndexAccess}, the replication of reservations and the routes, and tables which route goes where.
 * Only this verticle's context touches the state: a selection asks the index first and then chooses and books in one
 * step there. Catalog changes run one at a time, since each awaits the indexer.
 */
public final class SelectServiceVerticle extends VerticleBase {
    private final SelectServiceConfig config;
    private final SelectionState state;
    private final IndexAccess index;
    private final SplittableRandom random;
    private final SelectMetrics metrics = new SelectMetrics();
    /** What clients' bodies and replica-sync peers hold, sized as a node's budget. */
    private final NetworkBudget network =
            new NetworkBudget(NetworkConfig.defaults().maxBytes());

    private final Supplier<String> micrometer;
    private final HazelcastInstance hazelcast;
    private HttpEdge server;
    private long cleanupTimer = -1;
    private long queueTimer = -1;
    private long sessionTimer = -1;
    private boolean closing;
    private WorkerReconciler workers;
    private SelectionQueue queue;
    private SharedReservations shared;
    private ReplicaSync replicas;
    private ClusterBindings clusterBindings;
    private SelectionRoutes selections;
    private ReservationRoutes reservations;
    private PredictedIndex predicted;
    private final Spans spans;

    /** Milliseconds of a clock that only moves on: every expiry of the service is measured on it. */
    private static final LongSupplier CLOCK = () -> System.nanoTime() / 1_000_000;

    /**
     * @param hazelcast the cluster whose members share every reservation, or null for a service on its own
     * @param seed      the random source of ties, softmax draws and generated ids (tests fix it)
     * @param micrometer the JVM and Vert.x meters' text, shown on /metrics after the service's own families
     * @param spans     the spans of the process's tracing: a booking's claim and each member it waits for
     */
    public SelectServiceVerticle(
            SelectServiceConfig config,
            SelectionConfig selection,
            IndexAccess index,
            HazelcastInstance hazelcast,
            long seed,
            Supplier<String> micrometer,
            Spans spans) {
        this.spans = spans;
        this.micrometer = micrometer;
        this.config = config;
        this.index = index;
        this.hazelcast = hazelcast;
        this.random = new SplittableRandom(seed);
        this.state = new SelectionState(
                selection,
                CLOCK,
                random,
                new PendingSelections(config.cacheTtlMillis(), config.cacheMaxEntries(), config.cacheMaxBytes()),
                config.limits().maxBookingBlocks(),
                config.limits().maxBookedBlocks(),
                config.sessionAffinityTtlSecs() * 1000);
    }

    @Override
    public Future<?> start() {
        SelectionConfig selection = state.config();
        BookedPrompts prompts = bookedPrompts(selection);
        workers = new WorkerReconciler(state.roster(), selection, index, prompts, context);
        queue = new SelectionQueue(state.chooser());
        // Dynamo's service writes its bindings under its random process id, the one its load events carry.
        long writerId = startReplicaSync();
        if (state.sessions() != null) {
            replicateSessions(writerId);
        }
        if (selection.queueing()) {
            // Load also drops on other replicas and by expiry: look at least this often (Dynamo: every 60 s).
            queueTimer = vertx.setPeriodic(Math.min(60_000, config.cleanupIntervalMillis()), id -> queue.wake());
        }
        Future<Void> started = shareReservations(selection);
        Supplier<Future<Void>> bindingsShared =
                () -> clusterBindings == null ? Future.succeededFuture() : clusterBindings.settled();
        selections = new SelectionRoutes(
                state,
                queue,
                new IndexOverlaps(index, context, predicted),
                shared,
                prompts,
                bindingsShared,
                random,
                spans);
        reservations = new ReservationRoutes(state, queue, shared, prompts, bindingsShared, random);
        return started.compose(v -> HttpEdge.listen(
                        vertx, router(), config.http(), config.security(), config.host(), config.port()))
                .onSuccess(edge -> server = edge);
    }

    /** Where booked prompts are recorded; creates the predicted index when predicting. */
    private BookedPrompts bookedPrompts(SelectionConfig selection) {
        if (selection.predicting()) {
            predicted = new PredictedIndex(
                    vertx,
                    context,
                    index,
                    CLOCK,
                    selection.predictedTtlMillis(),
                    config.limits().maxBookedBlocks());
        }
        return !selection.useKvEvents()
                ? new ApproximateIndex(vertx, index, selection)
                : predicted != null ? predicted : BookedPrompts.NONE;
    }

    /** Starts replica sync when it has a port; its writer id, or 0 without it. */
    private long startReplicaSync() {
        if (config.replicaSyncPort() <= 0) {
            return 0;
        }
        long writerId = random.nextLong(1, Long.MAX_VALUE);
        replicas = ReplicaSync.start(
                config.replicaSyncPort(),
                config.replicaSyncPeers(),
                writerId,
                config.limits().maxBookingBlocks(),
                network,
                context,
                state.bookings(),
                state.mirror(),
                state.sessions());
        return writerId;
    }

    /**
     * Carries session bindings to the replicas and the cluster, under replica sync's writer id when there is one, and
     * sweeps idle ones.
     */
    private void replicateSessions(long replicaWriterId) {
        long writerId = replicaWriterId;
        if (hazelcast != null) {
            if (writerId == 0) {
                writerId = random.nextLong(1, Long.MAX_VALUE);
            }
            clusterBindings = new ClusterBindings(
                    vertx,
                    context,
                    hazelcast,
                    spans,
                    state.sessions(),
                    config.sessionAffinityTtlSecs() * 1000,
                    writerId);
        }
        state.sessions().replicate(writerId, this::shareBinding);
        // Idle bindings are also dropped when their table is full; this keeps the memory of idle ones short.
        long sweep = Math.min(config.sessionAffinityTtlSecs(), 30) * 1000;
        sessionTimer = vertx.setPeriodic(sweep, id -> state.sessions().expireIdle());
    }

    /**
     * Reservations shared through the cluster's maps, or kept here and expired by a timer of this service; completes
     * once the cluster's maps are in use.
     */
    private Future<Void> shareReservations(SelectionConfig selection) {
        if (hazelcast == null) {
            shared = new LocalReservations(state.bookings());
            cleanupTimer = vertx.setPeriodic(config.cleanupIntervalMillis(), id -> {
                state.ledger().expireStale();
                queue.wake();
            });
            return Future.succeededFuture();
        }
        // The cluster's map decides expiry, from admission, for every replica alike.
        ClusterLoad cluster = new ClusterLoad(
                vertx, context, hazelcast, spans, state.mirror(), state.bookings(), selection.requestExpiryMillis());
        shared = cluster;
        Future<Void> started = cluster.start(config.cleanupIntervalMillis());
        if (clusterBindings != null) {
            started = started.compose(v -> clusterBindings.start(config.cleanupIntervalMillis()));
        }
        return started;
    }

    @Override
    public Future<?> stop() {
        closing = true;
        vertx.cancelTimer(cleanupTimer);
        vertx.cancelTimer(queueTimer);
        vertx.cancelTimer(sessionTimer);
        if (shared != null) {
            shared.stop();
        }
        if (clusterBindings != null) {
            clusterBindings.stop();
        }
        if (replicas != null) {
            replicas.close();
        }
        if (predicted != null) {
            predicted.stop();
        }
        return server == null ? Future.succeededFuture() : server.close();
    }

    /** A binding made or refreshed here, carried to the other replicas. */
    private void shareBinding(SessionBindings.Binding b) {
        if (replicas != null) {
            replicas.publish(b);
        }
        if (clusterBindings != null) {
            clusterBindings.share(b);
        }
    }

    public int actualPort() {
        return server.actualPort();
    }

    /**
     * The service's figures for the node's dashboard ({@code /overview}'s {@code selection}), read on its context:
     * catalog, reservations and queue, and session bindings and predicted entries (null where off).
     */
    public Future<JsonObject> overview() {
        Promise<JsonObject> done = Promise.promise();
        context.runOnContext(v -> {
            long[] sessions = sessionCounts();
            PredictedIndex.Counts p = predicted == null ? null : predicted.counts();
            done.complete(new JsonObject()
                    .put("port", server == null ? null : server.actualPort())
                    .put("schedulable_workers", state.roster().schedulableWorkers())
                    .put("active_reservations", state.ledger().size())
                    .put("booked_blocks", state.ledger().blocks())
                    .put("queued_selections", queue.size())
                    .put(
                            "session_bindings",
                            state.sessions() == null
                                    ? null
                                    : new JsonObject()
                                            .put("bindings", sessions[0])
                                            .put("leases", sessions[1]))
                    .put(
                            "predicted",
                            p == null
                                    ? null
                                    : new JsonObject()
                                            .put("entries", p.entries())
                                            .put("confirmed_blocks", p.confirmedBlocks())
                                            .put("unconfirmed_blocks", p.unconfirmedBlocks())
                                            .put("evicted", p.evicted())));
        });
        return done.future();
    }

    /**
     * Messages taken from replica peers, how many of them were malformed, how many were dropped while too many
     * waited to be applied, and how many session bindings could not be kept; zeros without replica sync.
     */
    long[] replicaCounts() {
        return replicas == null ? new long[4] : replicas.counts();
    }

    /** Session bindings held (idle ones not yet swept included) and the leases on them; zeros when off. */
    long[] sessionCounts() {
        return state.sessions() == null
                ? new long[2]
                : new long[] {state.sessions().size(), state.sessions().leases()};
    }

    Router router() {
        Router router = Router.router(vertx);
        RequestPreamble preamble = RequestPreamble.install(
                router,
                "other",
                (route, method, status, nanos) -> metrics.answered.answered(route, status),
                null,
                false,
                network,
                SelectServiceConfig.BODY_LIMIT);
        guard(router, config.security());
        router.route().handler(this::refuseWhileClosing);
        JsonRoutes.serveHealth(router, ctx -> Responses.json(ctx, 200, Responses.OK));
        router.get("/metrics").handler(this::serveMetrics);
        router.get("/ready").handler(this::ready);
        body(router, HttpMethod.POST, "/workers", this::postWorker);
        router.get("/workers").handler(this::listWorkers);
        body(router, HttpMethod.PATCH, "/workers/:worker_id", this::patchWorker);
        router.delete("/workers/:worker_id").handler(JsonRoutes.guard(this::deleteWorker));
        body(router, HttpMethod.POST, "/select", ctx -> selections.select(ctx, false));
        body(router, HttpMethod.POST, "/select_and_reserve", ctx -> selections.select(ctx, true));
        body(router, HttpMethod.POST, "/reservations", reservations::reserve);
        router.post("/reservations/:selection_id/prefill_complete")
                .handler(JsonRoutes.guard(reservations::prefillComplete));
        body(router, HttpMethod.POST, "/reservations/:selection_id/output_block", reservations::outputBlock);
        router.delete("/reservations/:selection_id").handler(JsonRoutes.guard(reservations::free));
        router.get("/loads").handler(selections::loads);
        body(router, HttpMethod.POST, "/potential_loads", ctx -> selections.inspect(ctx, false));
        body(router, HttpMethod.POST, "/overlap_scores", ctx -> selections.inspect(ctx, true));
        router.get("/dump").handler(ctx -> index.dump(ctx.response()));
        ReplicaPeerRoutes.install(
                router, () -> replicas, (path, handler) -> body(router, HttpMethod.POST, path, handler));
        JsonRoutes.answerFailures(router, ctx -> "route not found", ctx -> "method not allowed");
        preamble.labelRoutes(router);
        return router;
    }

    private void refuseWhileClosing(RoutingContext ctx) {
        if (closing) {
            Responses.error(ctx, 503, "selection service is shutting down");
        } else {
            ctx.next();
        }
    }

    private void serveMetrics(RoutingContext ctx) {
        ctx.response()
                .setStatusCode(200)
                .putHeader("content-type", PrometheusText.CONTENT_TYPE)
                .end(metrics.render(
                        state.roster().schedulableWorkers(),
                        state.ledger().size(),
                        state.ledger().blocks(),
                        state.mirror().refusedBookings(),
                        queue.size(),
                        replicaCounts(),
                        sessionCounts()[0],
                        predicted == null ? PredictedIndex.Counts.NONE : predicted.counts(),
                        micrometer.get()));
    }

    /**
     * The indexer's rule on this port too: with a token, the routes that change the catalog or the replica peers need
     * it (they add publishers to the index), and with {@code authAll} every route does. Selections and reservations
     * are the routers' data path, as {@code /query} is on the indexer's port.
     */
    private static void guard(Router router, SecurityConfig security) {
        if (security.authToken() == null) {
            return;
        }
        BearerAuth auth = new BearerAuth(security.authToken());
        if (security.authAll()) {
            router.route().handler(auth);
            return;
        }
        router.post("/workers").handler(auth);
        router.patch("/workers/:worker_id").handler(auth);
        router.delete("/workers/:worker_id").handler(auth);
        router.post("/replica_sync/register_peer").handler(auth);
        router.post("/replica_sync/deregister_peer").handler(auth);
    }

    /** A route with a JSON body under the reference's 8 MiB limit; a non-JSON Content-Type is a 415. */
    private static void body(Router router, HttpMethod method, String path, Handler<RoutingContext> handler) {
        router.route(method, path).handler(ctx -> {
            if (JsonRequest.isJsonContentType(ctx.request().getHeader("content-type"))) {
                ctx.next();
            } else {
                Responses.error(ctx, JsonRoutes.unsupportedMediaType());
            }
        });
        router.route(method, path)
                .handler(JsonRoutes.bodies(SelectServiceConfig.BODY_LIMIT))
                .handler(JsonRoutes.guard(handler));
    }

    // ---- readiness and catalog ----

    private void ready(RoutingContext ctx) {
        int schedulable = state.roster().schedulableWorkers();
        boolean ready = !closing && schedulable > 0;
        Responses.answer(
                ctx,
                ready ? 200 : 503,
                new SelectAnswers.Ready(
                        ready,
                        schedulable,
                        SelectAnswers.workers(state.roster().catalog().list(null, null))));
    }

    private void listWorkers(RoutingContext ctx) {
        Responses.answer(
                ctx,
                200,
                SelectAnswers.workers(
                        state.roster().catalog().list(param(ctx, "model_name"), param(ctx, "routing_group"))));
    }

    private void postWorker(RoutingContext ctx) {
        WorkerEntry entry = SelectJson.checkRanks(
                SelectJson.worker(JsonRequest.of(ctx).body()), config.limits().maxWorkerRanks());
        Replies.send(ctx, 201, workers.upsert(entry).map(SelectAnswers::worker));
    }

    private void patchWorker(RoutingContext ctx) {
        long id = workerId(ctx);
        JsonObject body = JsonRequest.of(ctx).body();
        Replies.send(
                ctx,
                200,
                workers.patch(
                                id,
                                base -> SelectJson.checkRanks(
                                        SelectJson.worker(body, id, base.partition(), base),
                                        config.limits().maxWorkerRanks()))
                        .map(SelectAnswers::worker));
    }

    private void deleteWorker(RoutingContext ctx) {
        Replies.send(ctx, 200, workers.delete(workerId(ctx)).map(SelectAnswers::worker));
    }

    private static long workerId(RoutingContext ctx) {
        String raw = ctx.pathParam("worker_id");
        try {
            return Long.parseUnsignedLong(raw);
        } catch (NumberFormatException e) {
            throw new HttpError(400, "Invalid URL: Cannot parse `" + raw + "` to a `u64`");
        }
    }

    private static String param(RoutingContext ctx, String name) {
        return ctx.queryParams().get(name);
    }
}
