package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A standalone node on loopback and an HTTP client for it, the fixture most node tests share: registered on a static
 * field it lives for the class, on an instance field for each test. Engines are {@link TestPublisher}s that a test
 * registers here and feeds with {@link #vllmBatch}.
 */
public final class LocalNode implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    private final UnaryOperator<ServeConfig> adjust;
    private final List<TestPublisher> engines = new ArrayList<>();
    private IndexerNode node;
    private HttpJson http;
    private boolean perClass;

    public LocalNode() {
        this(UnaryOperator.identity());
    }

    /** A node whose default local configuration is adjusted first (a token, a smaller budget). */
    public LocalNode(UnaryOperator<ServeConfig> adjust) {
        this.adjust = adjust;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        perClass = true;
        start();
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        if (!perClass) {
            start();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!perClass) {
            stop();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    private void start() throws Exception {
        node = IndexerNode.start(adjust.apply(ServeConfig.local(0)));
        http = new HttpJson(node.httpPort());
    }

    private void stop() {
        engines.forEach(TestPublisher::close);
        engines.clear();
        if (node != null) {
            node.close();
            node = null;
        }
    }

    public IndexerNode node() {
        return node;
    }

    public HttpJson http() {
        return http;
    }

    /**
     * SGLang's gRPC port on this node, on 127.0.0.1, answering for its engines of model "m" and counting on its
     * /metrics page; returns the port.
     */
    public int startGrpc() throws Exception {
        return node.serveGrpc(
                        new GrpcConfig("127.0.0.1", 0, GrpcConfig.DEFAULT_PREFIX_MAX_INFLIGHT, "m", "default"),
                        SecurityConfig.NONE,
                        RecoveryConfig.DEFAULT,
                        1)
                .toCompletionStage()
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
    }

    /** A publisher for an engine, closed with the node. */
    public TestPublisher engine() {
        TestPublisher engine = new TestPublisher();
        engines.add(engine);
        return engine;
    }

    /** Registers rank {@code dp} of engine {@code id} (model "m", block size 4) and waits until the node subscribes. */
    public void register(long id, int dp, TestPublisher engine) {
        register(id, dp, engine, "m", 4);
    }

    /** Registers rank {@code dp} of engine {@code id} at {@code engine}'s endpoint and waits until the node subscribes. */
    public void register(long id, int dp, TestPublisher engine, String model, int blockSize) {
        JsonObject body = new JsonObject()
                .put("instance_id", id)
                .put("dp_rank", dp)
                .put("endpoint", engine.endpoint())
                .put("model_name", model)
                .put("block_size", blockSize);
        HttpResponse<String> r = http.post("/register", body.encode());
        assertEquals(201, r.statusCode(), r.body());
        try {
            engine.awaitSubscriber();
        } catch (AssertionError e) {
            throw new AssertionError(
                    e.getMessage() + "; workers: " + http.get("/workers").body(), e);
        }
    }

    /**
     * Engine 1 registered at a publisher of its own, stores one block and the node answers a query for it: what a
     * node shows once a worker, an event and a query are behind it.
     */
    public void storeOneBlockAndQueryIt() {
        TestPublisher engine = engine();
        register(1, 0, engine);
        engine.publish(
                "", 0, vllmBatch(new EngineEvent.Store(new long[] {1}, null, new int[] {0, 1, 2, 3}, 4, "GPU", null)));
        Await.until("the event applied", Await.PATIENCE, () -> node.counters().appliedCount("stored", "ok") == 1);
        HttpResponse<String> r = http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[0,1,2,3]}");
        assertEquals(200, r.statusCode(), r.body());
    }

    /** A vLLM batch (map era) of {@code events} at timestamp 1.0 on rank 0, as an engine publishes it. */
    public static byte[] vllmBatch(EngineEvent... events) {
        return BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, List.of(events), 0);
    }
}
