package dev.kvindexer;

import dev.kvindexer.cluster.PeerRecovery;
import dev.kvindexer.cluster.PeerSet;
import dev.kvindexer.cluster.ReadyGate;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.WorkerSpec;
import dev.kvindexer.http.HttpVerticle;
import dev.kvindexer.http.NodeServices;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.LocalCodec;
import dev.kvindexer.partition.PartitionKey;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.RegistrationService;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** Assembles and runs one indexer node: Vert.x, ingest, registry, partitions and the HTTP API. */
public final class IndexerNode {
    /** Decoded batches allowed between the ingest threads and the partitions (bounded memory under a flood). */
    static final int MAX_IN_FLIGHT_BATCHES = 10_000;
    static final long SLOW_JOINER_MILLIS = 1000;

    private final Vertx vertx;
    private final ZmqIngest ingest;
    private final NodeServices services;
    private int httpPort;

    private IndexerNode(Vertx vertx, ZmqIngest ingest, NodeServices services) {
        this.vertx = vertx;
        this.ingest = ingest;
        this.services = services;
    }

    /**
     * Starts a node and waits until its HTTP port is bound and its startup workers are registered. Blocking:
     * call it from a main or test thread, never from an event loop.
     */
    public static IndexerNode start(ServeConfig config) throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(config.threads()));
        LocalCodec.registerAll(vertx.eventBus());
        EventCounters counters = new EventCounters();
        Registry registry = new Registry();
        boolean gated = !config.peers().isEmpty() || config.minInitialWorkers() > 0;
        ReadyGate gate = gated ? ReadyGate.closed("starting") : ReadyGate.open();
        ZmqIngest ingest = new ZmqIngest(vertx, config.ingestThreads(), MAX_IN_FLIGHT_BATCHES, counters,
                registry::listener, gate);
        PeerSet peers = new PeerSet();
        Watermarks watermarks = new Watermarks();
        NodeServices services = new NodeServices(new RegistrationService(vertx, registry, ingest, counters, watermarks),
                registry, peers, counters, watermarks, ingest, config.testEndpoints(), gate);
        IndexerNode node = new IndexerNode(vertx, ingest, services);
        try {
            // HTTP first (SPEC 10.1 [REC]): /health answers and /register can satisfy the initial-workers wait.
            await(node.deployHttp(config).compose(v -> node.registerStartupWorkers(config)));
            node.recoverAndOpenGate(config);
        } catch (Exception e) {
            node.close();
            throw e;
        }
        return node;
    }

    /** SPEC §10.1 steps 3–6: slow-joiner window, recovery from --peers, initial-workers wait, then the gate opens. */
    private void recoverAndOpenGate(ServeConfig config) throws InterruptedException {
        ReadyGate gate = services.gate();
        if (!config.peers().isEmpty()) {
            gate.waitingFor("recovering from peers " + config.peers());
            // The listeners just connected; give their subscriptions time to reach the engines before the dump
            // is taken, so nothing published in between is missed (the reference waits the same second).
            Thread.sleep(SLOW_JOINER_MILLIS);
            new PeerRecovery(vertx, services.registrations(), config.blockSize()).recover(config.peers());
            config.peers().forEach(services.peers()::add);
        }
        int wanted = config.minInitialWorkers();
        while (services.registry().instanceCount() < wanted) {
            gate.waitingFor("waiting for " + wanted + " registered workers, have " + services.registry().instanceCount());
            Thread.sleep(100);
        }
        gate.openGate();
    }

    private static <T> T await(Future<T> future) throws Exception {
        try {
            return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
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
            HttpVerticle v = new HttpVerticle(services, config.host(), port);
            verticles.add(v);
            chain = chain.compose(ignored -> vertx.deployVerticle(v).<Void>mapEmpty());
        }
        return chain.map(ignored -> {
            httpPort = verticles.get(0).actualPort();
            return null;
        });
    }

    private Future<Void> registerStartupWorkers(ServeConfig config) {
        Future<Void> chain = Future.succeededFuture();
        PartitionKey key = new PartitionKey(config.modelName(), config.tenantId());
        for (WorkerSpec w : config.workers()) {
            RegisterRequest r = new RegisterRequest(w.instanceId(), w.dpRank(), w.endpoint(), null, key, config.blockSize());
            chain = chain.compose(v -> services.registrations().register(r));
        }
        return chain;
    }

    public int httpPort() {
        return httpPort;
    }

    public Vertx vertx() {
        return vertx;
    }

    public NodeServices services() {
        return services;
    }

    /** Stops listeners, Vert.x and the ingest threads. Blocking, like {@link #start}. */
    public void close() {
        try {
            await(services.registrations().stopAll());
        } catch (Exception e) {
            // Shutting down anyway: sockets are closed with their threads below.
        }
        try {
            await(vertx.close());
        } catch (Exception e) {
            // Nothing left to do with a Vert.x instance that failed to close.
        }
        ingest.close();
    }
}
