package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.config.SecuritySettings;
import dev.kvindexer.metrics.PrometheusText;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.zmq.ZmqEndpoint;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.select.ConfigOverride;
import dev.kvindexer.select.PendingSelections;
import dev.kvindexer.select.Prompt;
import dev.kvindexer.select.ReservationRecord;
import dev.kvindexer.select.RankOverlaps;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SelectionState;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.web.BearerAuth;
import dev.kvindexer.web.HttpEdge;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonRequest;
import dev.kvindexer.web.JsonRoutes;
import dev.kvindexer.web.RequestPreamble;
import dev.kvindexer.web.Responses;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * Dynamo's standalone selection service over HTTP (SPEC §12): the worker catalog, selections, reservations and their
 * lifecycle, and the inspection routes, on a {@link SelectionState} that only this verticle's context touches. The
 * KV side is the embedded indexer behind {@link IndexAccess}; a selection asks it first and then chooses and books
 * in one step on this context. Catalog changes run one at a time, since each awaits the indexer.
 */
public final class SelectServiceVerticle extends VerticleBase {
    private final SelectServiceConfig config;
    private final SelectionState state;
    private final IndexAccess index;
    private final SplittableRandom random;
    private final SelectMetrics metrics = new SelectMetrics();
    private final Supplier<String> micrometer;
    private HttpEdge server;
    private Context home;
    private long cleanupTimer = -1;
    private WorkerReconciler workers;
    /** The index of bookings, when workers publish no KV events; null otherwise. */
    private ApproximateIndex approximate;
    private boolean closing;
    private ReplicaSync replicas;
    /** Selections waiting for load to drop, per partition, first come first served (SPEC §12.9.7). */
    private final java.util.Map<PartitionKey, java.util.ArrayDeque<Waiting>> queues = new java.util.HashMap<>();
    private long queueTimer = -1;

    private record Waiting(SelectionState.Options options, long isl, Runnable resume) {
    }
    private final HazelcastInstance hazelcast;
    private ClusterLoad clusterLoad;

    /**
     * @param hazelcast the cluster whose members share every reservation, or null for a service on its own
     * @param seed      the random source of ties, softmax draws and generated ids (tests fix it)
     * @param micrometer the JVM and Vert.x meters' text, shown on /metrics after the service's own families
     */
    public SelectServiceVerticle(SelectServiceConfig config, SelectionConfig selection, IndexAccess index,
                                 HazelcastInstance hazelcast, long seed, Supplier<String> micrometer) {
        this.micrometer = micrometer;
        this.config = config;
        this.index = index;
        this.hazelcast = hazelcast;
        this.random = new SplittableRandom(seed);
        this.state = new SelectionState(selection, () -> System.nanoTime() / 1_000_000, random,
                new PendingSelections(config.cacheTtlMillis(), config.cacheMaxEntries(), config.cacheMaxBytes()),
                config.limits().maxBookingBlocks(), config.limits().maxBookedBlocks());
    }

    @Override
    public Future<?> start() {
        home = context;
        workers = new WorkerReconciler(state, index, home);
        if (!state.config().useKvEvents()) {
            approximate = new ApproximateIndex(vertx, index, state.config().approximateTtlMillis());
        }
        if (config.replicaSyncPort() > 0) {
            long routerId = random.nextLong(1, Long.MAX_VALUE);
            replicas = new ReplicaSync(config.replicaSyncPort(), config.replicaSyncPeers(), routerId,
                    config.limits().maxBookingBlocks(), (r, applied) -> home.runOnContext(v -> {
                        applied.run();
                        state.applyRemote(r.event());
                    }));
            state.onEvent(replicas::publish);
        }
        if (state.config().queueing()) {
            // Load also drops on other replicas and by expiry: look at least this often (Dynamo: every 60 s).
            queueTimer = vertx.setPeriodic(Math.min(60_000, config.cleanupIntervalMillis()), id -> wakeQueues());
        }
        Future<Void> shared = Future.succeededFuture();
        if (hazelcast != null) {
            // The cluster's map decides expiry, from admission, for every replica alike.
            clusterLoad = new ClusterLoad(vertx, context, hazelcast, state, state.config().requestExpiryMillis());
            shared = clusterLoad.start(config.cleanupIntervalMillis());
        } else {
            cleanupTimer = vertx.setPeriodic(config.cleanupIntervalMillis(), id -> {
                state.expireStale();
                wakeQueues();
            });
        }
        return shared.compose(v -> HttpEdge.listen(vertx, router(), config.http(), config.security(), config.host(),
                config.port())).onSuccess(edge -> server = edge);
    }

    @Override
    public Future<?> stop() {
        closing = true;
        vertx.cancelTimer(cleanupTimer);
        vertx.cancelTimer(queueTimer);
        if (clusterLoad != null) {
            clusterLoad.stop();
        }
        if (replicas != null) {
            replicas.close();
        }
        return server == null ? Future.succeededFuture() : server.close();
    }

    public int actualPort() {
        return server.actualPort();
    }

    /**
     * Messages taken from replica peers, how many of them were malformed, and how many were dropped while too many
     * waited to be applied; zeros without replica sync.
     */
    long[] replicaCounts() {
        return replicas == null ? new long[3]
                : new long[] {replicas.received.get(), replicas.malformed.get(), replicas.overflow.get()};
    }

    Router router() {
        Router router = Router.router(vertx);
        RequestPreamble preamble = RequestPreamble.install(router, "other",
                (route, method, status, nanos) -> metrics.answered.answered(route, status), null, false);
        guard(router, config.security());
        router.route().handler(ctx -> {
            if (closing) {
                Responses.error(ctx, 503, "selection service is shutting down");
            } else {
                ctx.next();
            }
        });
        router.get("/health").handler(ctx -> Responses.json(ctx, 200, Responses.OK));
        router.get("/metrics").handler(ctx -> ctx.response().setStatusCode(200)
                .putHeader("content-type", PrometheusText.CONTENT_TYPE)
                .end(metrics.render(state.schedulableWorkers(), state.activeReservations(), state.bookedBlocks(),
                        state.refusedRemoteBookings(), queues.values().stream().mapToInt(java.util.ArrayDeque::size).sum(), replicaCounts(),
                        micrometer.get())));
        router.get("/ready").handler(this::ready);
        body(router, HttpMethod.POST, "/workers", this::postWorker);
        router.get("/workers").handler(ctx -> {
            JsonArray out = new JsonArray();
            state.catalog().list(param(ctx, "model_name"), param(ctx, "routing_group"))
                    .forEach(w -> out.add(SelectJson.record(w)));
            Responses.json(ctx, 200, out.encode());
        });
        body(router, HttpMethod.PATCH, "/workers/:worker_id", this::patchWorker);
        router.delete("/workers/:worker_id").handler(JsonRoutes.guard(this::deleteWorker));
        body(router, HttpMethod.POST, "/select", ctx -> select(ctx, false));
        body(router, HttpMethod.POST, "/select_and_reserve", ctx -> select(ctx, true));
        body(router, HttpMethod.POST, "/reservations", this::reserve);
        router.post("/reservations/:selection_id/prefill_complete").handler(JsonRoutes.guard(ctx -> {
            String id = ctx.pathParam("selection_id");
            lifecycle(ctx, id, () -> state.prefillComplete(id), () -> clusterLoad.prefillCompleted(id));
        }));
        body(router, HttpMethod.POST, "/reservations/:selection_id/output_block", ctx -> {
            JsonRequest body = JsonRequest.of(ctx);
            Object f = body.body().getValue("decay_fraction");
            if (f != null && !(f instanceof Number)) {
                throw HttpError.shape("`decay_fraction`: invalid type, expected f64");
            }
            double decay = f instanceof Number n ? n.doubleValue() : Double.NaN;
            String id = ctx.pathParam("selection_id");
            if (!Double.isNaN(decay) && !(decay >= 0.0 && decay <= 1.0)) {
                throw new HttpError(400, "decay_fraction must be between 0.0 and 1.0");
            }
            lifecycle(ctx, id, () -> state.outputBlock(id, decay), () -> clusterLoad.outputBlock(id, decay));
        });
        router.delete("/reservations/:selection_id").handler(JsonRoutes.guard(ctx -> {
            String id = ctx.pathParam("selection_id");
            ReservationRecord held = state.record(id);
            if (held == null && clusterLoad != null) {
                answer(ctx, 200, clusterLoad.freeUnseen(id).map(found -> found ? OK : notFound(id)));
                return;
            }
            state.free(id);
            answer(ctx, 200, shared(() -> clusterLoad.freed(id, held.incarnation())).map(v -> OK));
            wakeQueues();
        }));
        router.get("/loads").handler(this::loads);
        body(router, HttpMethod.POST, "/potential_loads", ctx -> inspect(ctx, false));
        body(router, HttpMethod.POST, "/overlap_scores", ctx -> inspect(ctx, true));
        router.get("/dump").handler(ctx -> index.dump(ctx.response()));
        router.get("/replica_sync/peers").handler(ctx -> Responses.json(ctx, 200,
                new JsonArray(replicas == null ? List.of() : new ArrayList<Object>(replicas.peers())).encode()));
        body(router, HttpMethod.POST, "/replica_sync/register_peer", ctx -> {
            String endpoint = peerEndpoint(ctx);
            Responses.json(ctx, replicas.addPeer(endpoint) ? 201 : 200, Responses.OK);
        });
        body(router, HttpMethod.POST, "/replica_sync/deregister_peer", ctx -> {
            if (!replicas.removePeer(peerEndpoint(ctx))) {
                throw new HttpError(404, "peer not found");
            }
            Responses.json(ctx, 200, Responses.OK);
        });
        JsonRoutes.answerFailures(router, ctx -> "route not found", ctx -> "method not allowed");
        preamble.labelRoutes(router);
        return router;
    }

    /**
     * The indexer's rule on this port too: with a token, the routes that change the catalog or the replica peers need
     * it (they add publishers to the index), and with {@code authAll} every route does. Selections and reservations
     * are the routers' data path, as {@code /query} is on the indexer's port.
     */
    private static void guard(Router router, SecuritySettings security) {
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
        router.route(method, path).handler(BodyHandler.create(false).setBodyLimit(SelectServiceConfig.BODY_LIMIT))
                .handler(JsonRoutes.guard(handler));
    }

    /** The peer PUB endpoint of a /replica_sync body, validated as listener endpoints are (SPEC §12.13.1). */
    private String peerEndpoint(RoutingContext ctx) {
        String endpoint = JsonRequest.of(ctx).requiredString("endpoint");
        if (replicas == null) {
            throw new HttpError(409, "replica sync is disabled");
        }
        String refusal = ZmqEndpoint.invalidMessage(endpoint);
        if (refusal != null) {
            throw new HttpError(400, refusal);
        }
        return endpoint;
    }

    // ---- readiness and catalog ----

    private void ready(RoutingContext ctx) {
        int schedulable = state.schedulableWorkers();
        boolean ready = !closing && schedulable > 0;
        JsonArray workers = new JsonArray();
        state.catalog().list(null, null).forEach(w -> workers.add(SelectJson.record(w)));
        Responses.json(ctx, ready ? 200 : 503, new JsonObject().put("ready", ready)
                .put("schedulable_workers", schedulable).put("workers", workers).encode());
    }

    private void postWorker(RoutingContext ctx) {
        WorkerEntry entry = SelectJson.checkRanks(SelectJson.worker(JsonRequest.of(ctx)),
                config.limits().maxWorkerRanks());
        answer(ctx, 201, workers.upsert(entry).map(SelectJson::record));
    }

    private void patchWorker(RoutingContext ctx) {
        long id = workerId(ctx);
        JsonRequest body = JsonRequest.of(ctx);
        answer(ctx, 200, workers.patch(id, base -> SelectJson.checkRanks(
                SelectJson.worker(body, id, base.partition(), base), config.limits().maxWorkerRanks()))
                .map(SelectJson::record));
    }

    private void deleteWorker(RoutingContext ctx) {
        answer(ctx, 200, workers.delete(workerId(ctx)).map(SelectJson::record));
    }

    /** Completes on this verticle's context, where the state may be touched. */
    private <T> Future<T> here(Future<T> f) {
        return ContextHop.on(home, f);
    }

    // ---- selection ----

    private void select(RoutingContext ctx, boolean reserve) {
        JsonRequest body = JsonRequest.of(ctx);
        PartitionKey p = SelectJson.partition(body);
        ConfigOverride override = SelectJson.override(body);
        SelectionState.Options options = SelectJson.options(body, override);
        SelectionState.PartitionInfo info = state.requireReady(p);
        Prompt prompt = SelectJson.prompt(body, info.blockSize(), info.eagle(), override, state.config(),
                true, random);
        if (state.overloaded(p, options)) {
            queues.computeIfAbsent(p, k -> new java.util.ArrayDeque<>())
                    .add(new Waiting(options, prompt.isl(), () -> choose(ctx, p, prompt, options, reserve)));
            return;
        }
        choose(ctx, p, prompt, options, reserve);
    }

    private void choose(RoutingContext ctx, PartitionKey p, Prompt prompt, SelectionState.Options options,
                        boolean reserve) {
        answer(ctx, 200, overlaps(p, prompt).compose(o -> {
            if (!reserve) {
                return Future.succeededFuture(SelectJson.choice(state.select(p, prompt, o, options), false));
            }
            SelectionState.Choice c = state.selectAndReserve(p, prompt, o, options);
            return shared(() -> clusterLoad.booked(c.selectionId())).map(v -> {
                recordBooking(p, c.worker().workerId(), c.dpRank(), c.prompt());
                return SelectJson.choice(c, true);
            });
        }));
    }

    private void reserve(RoutingContext ctx) {
        JsonRequest body = JsonRequest.of(ctx);
        String id = body.requiredString("selection_id");
        PartitionKey p = SelectJson.partition(body);
        if (!body.has("worker_id") || body.body().getValue("worker_id") == null) {
            SelectionState.Booking replayed = state.reserveReplay(p, id);
            answer(ctx, 201, shared(() -> clusterLoad.booked(id)).map(v -> booked(replayed)));
            return;
        }
        long workerId = body.requiredU64("worker_id");
        int dpRank = body.optionalU32("dp_rank", 0);
        ConfigOverride override = SelectJson.override(body);
        Long effective = SelectJson.optionalU64(body, "effective_prefill_tokens");
        Boolean track = SelectJson.bool(body, "track_prefill_tokens");
        Long expected = SelectJson.optionalU32(body, "expected_output_tokens");
        SelectionState.PartitionInfo info = state.requireReady(p);
        Prompt prompt = SelectJson.prompt(body, info.blockSize(), info.eagle(), override, state.config(),
                false, random);
        SelectionState.Booking b = state.reserveExplicit(p, id, workerId, dpRank, prompt, effective, track,
                override, expected, body.optionalString("lora_name"));
        answer(ctx, 201, shared(() -> clusterLoad.booked(id)).map(v -> booked(b)));
    }

    private JsonObject booked(SelectionState.Booking b) {
        recordBooking(b.partition(), b.worker().workerId(), b.dpRank(), b.prompt());
        return SelectJson.booking(b);
    }

    /** With KV events off, a booking's blocks count as cached on its rank for the router TTL (SPEC §12.12.2). */
    private void recordBooking(PartitionKey p, long workerId, int dpRank, Prompt prompt) {
        if (approximate != null) {
            approximate.booked(p, workerId, dpRank, prompt);
        }
    }

    private void loads(RoutingContext ctx) {
        String model = param(ctx, "model_name");
        String group = param(ctx, "routing_group");
        JsonArray out = new JsonArray();
        for (PartitionKey p : state.partitions()) {
            if ((model != null && !model.equals(p.modelName())) || (group != null && !group.equals(p.routingGroup()))) {
                continue;
            }
            JsonArray rows = new JsonArray();
            state.loads(p).forEach(r -> rows.add(SelectJson.loadRow(r)));
            out.add(new JsonObject().put("model_name", p.modelName()).put("routing_group", p.routingGroup())
                    .put("loads", rows).put("pending_count", queues.getOrDefault(p, new java.util.ArrayDeque<>()).size())
                    .put("pending_isl_tokens", queues.getOrDefault(p, new java.util.ArrayDeque<>()).stream()
                            .mapToLong(Waiting::isl).sum()));
        }
        Responses.json(ctx, 200, out.encode());
    }

    private void inspect(RoutingContext ctx, boolean scores) {
        JsonRequest body = JsonRequest.of(ctx);
        PartitionKey p = SelectJson.partition(body);
        ConfigOverride override = SelectJson.override(body);
        SelectionState.PartitionInfo info = state.requireReady(p);
        Prompt prompt = SelectJson.prompt(body, info.blockSize(), info.eagle(), override, state.config(),
                true, random);
        answer(ctx, 200, overlaps(p, prompt).map(o -> {
            if (scores) {
                return SelectJson.scores(info.blockSize(), prompt.blockHashes().length,
                        state.overlapScores(p, prompt, o, override));
            }
            JsonArray rows = new JsonArray();
            state.potentialLoads(p, prompt, o, override).forEach(r -> rows.add(SelectJson.loadRow(r)));
            return rows;
        }));
    }

    /** The index's tiered match of the prompt per rank; an index failure is a 500 with its message. */
    private Future<RankOverlaps> overlaps(PartitionKey p, Prompt prompt) {
        if (prompt.blockHashes().length == 0) {
            return Future.succeededFuture(RankOverlaps.NONE);
        }
        return here(index.queryTiered(p, prompt.blockHashes())).transform(ar -> {
            if (ar.failed()) {
                return Future.failedFuture(new HttpError(500, ar.cause().getMessage()));
            }
            return Future.succeededFuture(ranks(ar.result()));
        });
    }

    private static RankOverlaps ranks(TieredQueryResult result) {
        RankOverlaps out = new RankOverlaps();
        if (result == null) {
            return out;
        }
        TieredMatch m = result.match();
        add(out, m.device(), 0);
        for (TieredMatch.Tier t : m.lowerTiers()) {
            add(out, t.hits(), t.tier() == StorageTier.HOST_PINNED ? 1 : 2);
        }
        return out;
    }

    private static void add(RankOverlaps out, TieredMatch.Owners owners, int tier) {
        for (int i = 0; i < owners.size(); i++) {
            if (owners.blocks()[i] > 0) {
                out.add(owners.workers()[i], owners.ranks()[i], tier, owners.blocks()[i]);
            }
        }
    }

    /** Lets waiting selections go, in order, while their partition has a rank under the threshold. */
    private void wakeQueues() {
        for (java.util.Map.Entry<PartitionKey, java.util.ArrayDeque<Waiting>> e : queues.entrySet()) {
            java.util.ArrayDeque<Waiting> q = e.getValue();
            while (!q.isEmpty() && !state.overloaded(e.getKey(), q.peek().options())) {
                q.poll().resume().run();
            }
        }
    }

    /**
     * A lifecycle step on a reservation: applied here, then in the cluster's record. A reservation this replica has
     * no copy of is looked for in the cluster before it is a 404.
     */
    private void lifecycle(RoutingContext ctx, String id, Runnable local, Supplier<Future<Boolean>> cluster) {
        if (clusterLoad == null) {
            local.run();
            Responses.json(ctx, 200, Responses.OK);
        } else if (state.record(id) == null) {
            answer(ctx, 200, cluster.get().map(found -> found ? OK : notFound(id)));
        } else {
            local.run();
            answer(ctx, 200, cluster.get().map(found -> OK));
        }
        wakeQueues();
    }

    private static JsonObject notFound(String id) {
        throw Refusal.notFound("reservation " + id + " not found");
    }

    // ---- plumbing ----

    private static final JsonObject OK = new JsonObject().put("status", "ok");

    /** A change's step in the cluster's shared reservations; nothing to do for a service on its own. */
    private Future<Void> shared(Supplier<Future<Void>> step) {
        return clusterLoad == null ? Future.succeededFuture() : step.get();
    }

    /** Answers a JSON value computed on this context, or the refusal that stopped it. */
    private void answer(RoutingContext ctx, int status, Future<?> result) {
        result.onComplete(ar -> {
            if (ar.failed()) {
                Responses.error(ctx, ar.cause());
            } else {
                Object v = ar.result();
                Responses.json(ctx, status, v instanceof JsonObject o ? o.encode() : ((JsonArray) v).encode());
            }
        });
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
