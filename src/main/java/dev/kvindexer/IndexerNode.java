package dev.kvindexer;

import dev.kvindexer.cluster.PeerSet;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.WorkerSpec;
import dev.kvindexer.http.HttpVerticle;
import dev.kvindexer.http.NodeServices;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.LocalCodec;
import dev.kvindexer.partition.PartitionKey;
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
        ZmqIngest ingest = new ZmqIngest(vertx, config.ingestThreads(), counters);
        Registry registry = new Registry();
        PeerSet peers = new PeerSet();
        NodeServices services = new NodeServices(new RegistrationService(vertx, registry, ingest, counters),
                registry, peers, counters);
        IndexerNode node = new IndexerNode(vertx, ingest, services);
        try {
            await(node.deployHttp(config).compose(v -> node.registerStartupWorkers(config)));
        } catch (Exception e) {
            node.close();
            throw e;
        }
        config.peers().forEach(peers::add);
        return node;
    }

    private static <T> T await(Future<T> future) throws Exception {
        try {
            return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    /** One HTTP verticle per event loop; with port 0 the first picks the port and the others share it. */
    private Future<Void> deployHttp(ServeConfig config) {
        HttpVerticle first = new HttpVerticle(services, config.host(), config.port());
        return vertx.deployVerticle(first).compose(id -> {
            httpPort = first.actualPort();
            List<Future<String>> more = new ArrayList<>();
            for (int i = 1; i < config.threads(); i++) {
                more.add(vertx.deployVerticle(new HttpVerticle(services, config.host(), httpPort)));
            }
            return Future.all(more).mapEmpty();
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
