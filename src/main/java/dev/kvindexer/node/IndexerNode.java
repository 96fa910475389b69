package dev.kvindexer.node;

import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.cluster.AntiEntropy;
import dev.kvindexer.cluster.ClusterMembership;
import dev.kvindexer.cluster.ClusterRegistrar;
import dev.kvindexer.cluster.ClusterTransport;
import dev.kvindexer.cluster.MemberChannel;
import dev.kvindexer.cluster.PeerDirectory;
import dev.kvindexer.conductor.registry.CppConductorSubscriptions;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.WorkerSpec;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.grpc.ExternalKvPeers;
import dev.kvindexer.grpc.ExternalKvService;
import dev.kvindexer.grpc.GrpcVerticle;
import dev.kvindexer.grpc.RegisteredEngines;
import dev.kvindexer.http.DumpAdmission;
import dev.kvindexer.http.HttpVerticle;
import dev.kvindexer.http.IndexerApi;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.NodeMeters;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.metrics.Tracing;
import dev.kvindexer.metrics.VertxMeters;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.recovery.DataDirectory;
import dev.kvindexer.recovery.InstanceHistory;
import dev.kvindexer.recovery.PeerRecovery;
import dev.kvindexer.recovery.RecoveryReport;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Assembles and runs one indexer node: Vert.x (clustered or not), ingest, registry, partitions and the HTTP API. */
public final class IndexerNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IndexerNode.class);

    static final long SLOW_JOINER_MILLIS = 1000;
    /** SIGTERM to exit: the whole of {@link #close()} (inside Kubernetes' default grace period of 30 s). */
    public static final java.time.Duration CLOSE_BUDGET = java.time.Duration.ofSeconds(10);

    private final Vertx vertx;
    private final NodeParts parts;
    private final IndexerApi api;
    private final IndexQueries queries;
    private final DumpAdmission dumps;
    /** Shut down last, once Vert.x has ended its spans. */
    private volatile Tracing tracing = Tracing.OFF;

    private AntiEntropy antiEntropy;
    /** The data directory's periodic snapshot, or -1. */
    private long snapshotTimer = -1;
    /** The HTTP verticles' deployments: undeployed first on close, so no request is taken while the node winds down. */
    private final List<String> httpDeployments = new java.util.concurrent.CopyOnWriteArrayList<>();

    private int httpPort;
    private final AtomicReference<RecoveryReport> recovery;
    /** What a selection service on this node shows on the dashboard; null while none runs here. */
    private final AtomicReference<Supplier<Future<JsonObject>>> selection;
    /** Whether {@link #serveGrpc} was called: one port a node, so one set of listeners for the bridge's state. */
    private final java.util.concurrent.atomic.AtomicBoolean grpcServed =
            new java.util.concurrent.atomic.AtomicBoolean();
    /** What every port may hold on behalf of its peers (--max-network-memory). */
    private final NetworkBudget network;

    IndexerNode(
            Vertx vertx,
            NodeParts parts,
            IndexerApi api,
            IndexQueries queries,
            DumpAdmission dumps,
            AtomicReference<RecoveryReport> recovery,
            AtomicReference<Supplier<Future<JsonObject>>> selection,
            NetworkBudget network) {
        this.network = network;
        this.recovery = recovery;
        this.selection = selection;
        this.vertx = vertx;
        this.parts = parts;
        this.api = api;
        this.queries = queries;
        this.dumps = dumps;
    }

    /**
     * Starts a node and returns once its ready gate is open (docs/protocol/recovery.md#startup): HTTP bound, startup
     * and cluster
     * registrations applied, recovery done. Blocking: call it from a main or test thread, never from an event loop.
     */
    public static IndexerNode start(ServeConfig config) throws Exception {
        VertxOptions options = new VertxOptions().setEventLoopPoolSize(config.threads());
        VertxMeters meters = new VertxMeters();
        Tracing tracing = Tracing.configure(config.tracing());
        VertxBuilder builder = tracing.instrument(meters.instrument(Vertx.builder(), options), options);
        NodeMeters nodeMeters = new NodeMeters(meters, tracing.spans());
        NetworkBudget network = new NetworkBudget(config.network().maxBytes());
        HazelcastClusterManager manager = null;
        Vertx vertx;
        try {
            if (config.clustered()) {
                ClusterTransport transport = ClusterTransport.open(
                        config.cluster(),
                        config.security().authToken(),
                        config.recovery().maxBytes(),
                        nodeMeters.cluster(),
                        network,
                        config.network().messageTimeout());
                manager = transport.manager();
                vertx = await(transport.start(builder, options));
            } else {
                vertx = builder.build();
            }
        } catch (Exception e) {
            tracing.close();
            throw e;
        }
        vertx.exceptionHandler(IndexerNode::uncaughtInHandler);
        IndexerNode node;
        try {
            node = NodeAssembly.assemble(vertx, manager, config, nodeMeters, network);
        } catch (Exception e) {
            vertx.close();
            tracing.close();
            throw e;
        }
        node.tracing = tracing;
        try {
            // HTTP first (this project's choice, docs/protocol/recovery.md#startup): /health answers and /register can
            // satisfy the initial-workers wait.
            await(node.deployHttp(config));
            if (config.clustered()) {
                await(node.parts.membership().announce(node.advertisedUrl(config)));
                // Subscribe to every registered worker before recovering, so nothing published meanwhile is missed.
                // Registrations read while joining have a history elsewhere: their shards are taken over with it.
                node.parts.registrations().deferHeldShards(node.parts.sharded());
                await(node.parts.clusterRegistrar().start());
                node.parts.registrations().deferHeldShards(false);
            }
            await(node.registerStartupWorkers(config));
            node.recoverAndOpenGate(config);
            if (config.clustered()) {
                node.startAntiEntropy(config.cluster().reconcileInterval());
            }
            if (node.parts.sharded()) {
                node.parts.handover().resumePasses();
                node.parts.handover().rebalance();
            }
        } catch (Exception e) {
            node.close();
            throw e;
        }
        return node;
    }

    /** From now on the data directory gets a snapshot every {@code interval}. */
    private synchronized void startSnapshots(java.time.Duration interval) {
        snapshotTimer =
                vertx.setPeriodic(interval.toMillis(), id -> parts.dataDir().write());
    }

    /** From now on the node also reconciles everything on membership changes and every {@code interval}. */
    private synchronized void startAntiEntropy(java.time.Duration interval) {
        ClusterMembership membership = parts.membership();
        ClusterRegistrar clusterRegistrar = parts.clusterRegistrar();
        boolean sharded = parts.sharded();
        antiEntropy = new AntiEntropy(
                vertx,
                parts.hazelcast(),
                interval,
                () -> Future.join(
                                clusterRegistrar.reconcileAll(),
                                membership.reassert().otherwiseEmpty())
                        .compose(v -> sharded ? parts.handover().rebalance() : Future.succeededFuture())
                        .mapEmpty());
        antiEntropy.start();
    }

    /**
     * A handler on an event loop threw. Vert.x keeps the loop running, which is right for an exception; an error
     * (out of memory above all) goes to the process's uncaught-error policy, which the command line sets to exit.
     */
    private static void uncaughtInHandler(Throwable t) {
        if (t instanceof Error) {
            Thread.UncaughtExceptionHandler policy = Thread.getDefaultUncaughtExceptionHandler();
            if (policy != null) {
                policy.uncaughtException(Thread.currentThread(), t);
                return;
            }
        }
        LOG.error("unhandled exception in a handler", t);
    }

    private String advertisedUrl(ServeConfig config) {
        ClusterConfig cluster = config.cluster();
        return cluster.advertiseUrl() != null
                ? cluster.advertiseUrl()
                : (config.security().tls() ? "https://" : "http://") + cluster.host() + ":" + httpPort;
    }

    /**
     * Startup steps 5–7 (docs/protocol/recovery.md#startup): slow-joiner window, recovery, initial-workers wait, then
     * the gate opens. A clustered node
     * recovers from the cluster's ready nodes unless --peers names others; a node that finds no ready peer (the first
     * node, or several starting at once) starts empty instead of waiting, so nodes never wait for each other.
     */
    private void recoverAndOpenGate(ServeConfig config) throws Exception {
        List<String> sources = recoverySources(config);
        RecoveryReport report = recover(config, sources);
        if (report.peer() != null) {
            recovery.set(report);
            parts.meters().recovered(report.millis(), report.events(), report.exact());
        }
        if (!sources.isEmpty()) {
            config.peers().forEach(parts.peers()::add);
        }
        int wanted = config.minInitialWorkers();
        while (parts.registry().workerCount() < wanted) {
            parts.gate()
                    .waitingFor("waiting for " + wanted + " registered workers, have "
                            + parts.registry().workerCount());
            Thread.sleep(100);
        }
        parts.gate().openGate();
        if (parts.membership() != null) {
            await(parts.membership().markReady());
        }
        if (parts.dataDir() != null) {
            startSnapshots(config.durability().snapshotInterval());
        }
    }

    /** The peers to recover from: --peers, else the cluster's ready nodes; none for a shard. */
    private List<String> recoverySources(ServeConfig config) throws Exception {
        List<String> sources = config.peers();
        if (parts.sharded()) {
            // A shard's history stays with its holders (see start): nothing to load from a peer's whole dump.
            return List.of();
        }
        if (sources.isEmpty() && parts.membership() != null) {
            sources = await(parts.membership().peers(true));
            if (sources.isEmpty()) {
                LOG.info("no ready node in the cluster to recover from; starting with an empty index");
            }
        }
        return sources;
    }

    /** Loads the index from a peer or the data directory, whichever startup asks for first and has it. */
    private RecoveryReport recover(ServeConfig config, List<String> sources) throws Exception {
        Registry registry = parts.registry();
        DataDirectory dataDir = parts.dataDir();
        boolean diskFirst = dataDir != null && config.durability().recoverFromDisk();
        RecoveryReport report = RecoveryReport.NONE;
        if (!sources.isEmpty() && !diskFirst) {
            parts.gate().waitingFor("recovering from peers " + sources);
            // The listeners just connected; give their subscriptions time to reach the engines before the dump
            // is taken, so little is published in between (the reference waits the same second).
            Thread.sleep(SLOW_JOINER_MILLIS);
            report = new PeerRecovery(
                            parts.registrations(),
                            config.blockSize(),
                            config.security().authToken(),
                            config.clustered() ? (key, worker) -> key.equals(registry.partitionOf(worker)) : null,
                            config.recovery())
                    .recover(sources);
        }
        if (dataDir != null && report.peer() == null && (diskFirst || !historyHeldByPeers())) {
            parts.gate().waitingFor("loading the data directory " + dataDir.dir());
            // The engines replay what they published after the snapshot's watermarks, so nothing needs waiting for.
            // A sharded node alone serves every instance now, those its file has nothing of without any history:
            // marked, so that a node whose file has them replaces these copies (docs/protocol/recovery.md).
            report = dataDir.recover(
                    registrar(),
                    parts.registrations(),
                    config.blockSize(),
                    (key, worker) -> key.equals(registry.partitionOf(worker)) && registry.servesHere(worker),
                    parts.sharded() ? registry::markWithoutHistory : worker -> {});
        } else if (dataDir != null && report.peer() == null && parts.sharded()) {
            parts.gate()
                    .waitingFor("restoring from the data directory " + dataDir.dir()
                            + " the instances no ready node has the history of");
            List<InstanceHistory> histories = dataDir.histories();
            await(
                    parts.handover().restore(histories),
                    config.recovery().timeout().multipliedBy(Math.max(1, histories.size())));
        }
        return report;
    }

    /**
     * Whether a sharded cluster has a ready node: the registrations and most shards' history are then the cluster's,
     * and disk adds only the instances no node serves with their history.
     */
    private boolean historyHeldByPeers() throws Exception {
        return parts.sharded() && !await(parts.membership().peers(true)).isEmpty();
    }

    static <T> T await(Future<T> future) throws Exception {
        return await(future, java.time.Duration.ofSeconds(30));
    }

    private static <T> T await(Future<T> future, java.time.Duration timeout) throws Exception {
        try {
            return future.toCompletionStage().toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    /**
     * One HTTP verticle per event loop, all sharing the port. For port 0 they listen on -1: Vert.x gives servers
     * with the same negative port one shared random port.
     */
    private Future<Void> deployHttp(ServeConfig config) {
        int port = config.port() == 0 ? -1 : config.port();
        List<HttpVerticle> verticles = new ArrayList<>();
        Future<Void> chain = Future.succeededFuture();
        for (int i = 0; i < config.threads(); i++) {
            HttpVerticle v = new HttpVerticle(api, config.security(), config.http(), config.host(), port);
            verticles.add(v);
            chain = chain.compose(ignored -> vertx.deployVerticle(v).map(id -> {
                httpDeployments.add(id);
                return (Void) null;
            }));
        }
        return chain.map(ignored -> {
            httpPort = verticles.get(0).actualPort();
            return null;
        });
    }

    /** --workers; in a cluster another node may have registered them already, which is what was asked for. */
    private Future<Void> registerStartupWorkers(ServeConfig config) {
        Future<Void> chain = Future.succeededFuture();
        PartitionKey key = new PartitionKey(config.modelName(), config.routingGroup());
        for (WorkerSpec w : config.workers()) {
            RegisterRequest r =
                    new RegisterRequest(w.workerId(), w.dpRank(), w.endpoint(), null, key, config.blockSize());
            chain = chain.compose(v -> registrar().register(r).recover(t -> {
                if (config.clustered() && t instanceof Refusal refused && refused.kind() == Refusal.Kind.CONFLICT) {
                    LOG.warn("--workers entry {} not registered: {}", w, t.getMessage());
                    return Future.succeededFuture();
                }
                return Future.failedFuture(t);
            }));
        }
        return chain;
    }

    /** What startup recovery loaded, and from whom. */
    public RecoveryReport recovery() {
        return recovery.get();
    }

    /**
     * A selection service started on this node shows {@code view} (docs/operations.md's dashboard) as
     * {@code /overview}'s {@code selection}.
     */
    public void showSelection(Supplier<Future<JsonObject>> view) {
        selection.set(view);
    }

    public int httpPort() {
        return httpPort;
    }

    /** The node's own spans, for services that run on its Vert.x ({@link Spans#OFF} without tracing). */
    public Spans spans() {
        return parts.meters().spans();
    }

    public Vertx vertx() {
        return vertx;
    }

    /** This node's Hazelcast member, or null when it is standalone. */
    public HazelcastInstance hazelcast() {
        return parts.hazelcast();
    }

    /** What registrations go through: this node, or the whole cluster. */
    public Registrar registrar() {
        return parts.topology().registrar();
    }

    /** This node's own registrations. */
    public LocalRegistrar registrations() {
        return parts.registrations();
    }

    /** Registered workers and the handles of their partitions. */
    public Registry registry() {
        return parts.registry();
    }

    /** The peers this node copies its index from ({@code --peers}, /register_peer). */
    public PeerDirectory peers() {
        return parts.peers();
    }

    /** What every port of the node may hold on behalf of its peers; a port started beside the node shares it. */
    public NetworkBudget network() {
        return network;
    }

    /** This node's engines of one partition, as SGLang's gRPC prefix query asks them. */
    public RegisteredEngines registeredEngines(String modelName, String routingGroup) {
        return new RegisteredPrefixes(queries, registry(), new PartitionKey(modelName, routingGroup));
    }

    /**
     * Serves SGLang's KVIndexer on {@code grpc}'s port from {@code instances} event loops, answering prefix queries
     * for the engines of {@code grpc}'s partition too; in a cluster, once it holds what the bridge told the other
     * members. Completes with the bound port.
     *
     * @param recovery bounds how long a starting member waits for another member's bridge state, and its size
     */
    public Future<Integer> serveGrpc(GrpcConfig grpc, SecurityConfig security, RecoveryConfig recovery, int instances) {
        ExternalKvService service = new ExternalKvService(
                grpc.prefixMaxInflight(),
                grpc.maxWorkers(),
                grpc.maxPlacements(),
                registeredEngines(grpc.modelName(), grpc.routingGroup()),
                externalKvPeers(new PartitionKey(grpc.modelName(), grpc.routingGroup()), recovery));
        if (!grpcServed.compareAndSet(false, true)) {
            return Future.failedFuture("this node already serves the gRPC port");
        }
        return service.join()
                .compose(v -> GrpcVerticle.deploy(
                        vertx, service, grpc, security, parts.meters().grpc(), network, instances))
                .recover(t -> service.stop().transform(stopped -> Future.failedFuture(t)));
    }

    private ExternalKvPeers externalKvPeers(PartitionKey served, RecoveryConfig recovery) {
        return parts.hazelcast() == null
                ? ExternalKvPeers.NONE
                : new ExternalKvMembers(
                        vertx,
                        parts.hazelcast(),
                        served,
                        spans(),
                        recovery.timeout(),
                        MemberChannel.largestMessage(recovery.maxBytes()));
    }

    /** The index as the query routes ask it. */
    public IndexQueries queries() {
        return queries;
    }

    /** How many /dump bodies may be written at once, over every caller. */
    public DumpAdmission dumps() {
        return dumps;
    }

    /** What the HTTP verticles serve (the OpenAPI coverage test builds their router from it). */
    public IndexerApi api() {
        return api;
    }

    /** The C++ Conductor's registrations and state. */
    public CppConductorSubscriptions conductor() {
        return parts.conductor();
    }

    public EventCounters counters() {
        return parts.counters();
    }

    public Watermarks watermarks() {
        return parts.watermarks();
    }

    public ZmqIngest ingest() {
        return parts.ingest();
    }

    public NodeMeters meters() {
        return parts.meters();
    }

    /** The cluster's membership, or null on a standalone node. */
    public ClusterMembership membership() {
        return parts.membership();
    }

    /** The node's Micrometer registry in Prometheus text, for a service sharing its process (the slot tracker). */
    public String micrometerScrape() {
        return parts.meters().micrometerScrape();
    }

    /**
     * Stops taking requests, leaves the cluster (if any), stops listeners, Vert.x and the ingest threads, within
     * {@link #CLOSE_BUDGET} in all: a step that has not finished by then is abandoned. Blocking, like {@link #start}.
     */
    @Override
    public void close() {
        long deadline = System.nanoTime() + CLOSE_BUDGET.toNanos();
        synchronized (this) {
            if (snapshotTimer >= 0) {
                vertx.cancelTimer(snapshotTimer);
            }
        }
        // HTTP first: a load balancer's next attempt goes to another replica instead of a node winding down.
        for (String id : httpDeployments) {
            quietly(vertx.undeploy(id), deadline);
        }
        if (parts.dataDir() != null && parts.gate().isOpen()) {
            // Before the listeners stop, with every registration the node took: a restart resumes from here.
            quietly(parts.dataDir().writeFinal(), deadline);
        }
        synchronized (this) {
            if (antiEntropy != null) {
                antiEntropy.stop();
            }
        }

        if (parts.membership() != null) {
            quietly(parts.membership().leave(), deadline);
        }
        if (parts.clusterRegistrar() != null) {
            quietly(parts.clusterRegistrar().stop(), deadline);
        }
        if (parts.sharded()) {
            quietly(parts.handover().stop(), deadline);
            quietly(parts.topology().shards().stop(), deadline);
        }
        parts.gapRepair().close();
        // Shutting down anyway: sockets are closed with their threads below.
        quietly(parts.registrations().stopAll(), deadline);
        quietly(vertx.close(), deadline);
        parts.ingest().close(java.time.Duration.ofNanos(Math.max(deadline - System.nanoTime(), 0)));
        if (parts.accessLog() != null) {
            parts.accessLog().close();
        }
        // Last, once Vert.x has ended its spans: a few seconds at most (a collector that is down is retried for
        // longer), within the budget, with a moment to flush even when it is spent.
        tracing.close(java.time.Duration.ofNanos(Math.min(
                Math.max(
                        deadline - System.nanoTime(),
                        java.time.Duration.ofMillis(500).toNanos()),
                Tracing.SHUTDOWN.toNanos())));
    }

    private static void quietly(Future<?> step, long deadline) {
        try {
            step.toCompletionStage()
                    .toCompletableFuture()
                    .get(Math.max(deadline - System.nanoTime(), 1), TimeUnit.NANOSECONDS);
        } catch (Exception e) {
            LOG.debug("shutdown step failed: {}", e.toString());
        }
    }
}
