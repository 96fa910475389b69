package dev.kvindexer.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Dynamo-compatible startup recovery (--peers), the ready gate and DYN_ROUTER_MIN_INITIAL_WORKERS
 * (docs/protocol/recovery.md).
 */
class PeerRecoveryTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String QUERY = "{\"model_name\":\"m\",\"token_ids\":[0,1,2,3,4,5,6,7,8,9,10,11]}";

    private static ServeConfig withPeers(int port, List<String> peers, int minWorkers) {
        return new ServeConfig("127.0.0.1", port, 2, 1, List.of(), null, "default", "default", peers, true, minWorkers);
    }

    private static byte[] store(long[] hashes, Long parent, int from) {
        return BatchEncoder.batch(
                BatchEncoder.Format.VLLM_MAP,
                1.0,
                List.of(new EngineEvent.Store(
                        hashes,
                        parent,
                        IntStream.range(from, from + 4 * hashes.length).toArray(),
                        4,
                        "GPU",
                        null)),
                0);
    }

    @Test
    void aNewReplicaLoadsItsPeersDumpAndTakesTheFirstLiveBatchAsIs() throws Exception {
        try (TestPublisher engine = new TestPublisher()) {
            IndexerNode a = IndexerNode.start(ServeConfig.local(0));
            IndexerNode b = null;
            try {
                HttpJson httpA = new HttpJson(a.httpPort());
                String register = "{\"instance_id\":1,\"endpoint\":\"" + engine.endpoint()
                        + "\",\"model_name\":\"m\",\"block_size\":4}";
                assertEquals(201, httpA.post("/register", register).statusCode());
                engine.awaitSubscriber();
                engine.publish("", 0, store(new long[] {100, 200}, null, 0));
                engine.publish("", 1, store(new long[] {300}, 200L, 8));
                Await.until(
                        "peer applied both batches",
                        WAIT,
                        () -> httpA.post("/query", QUERY).body().contains("\"gpu\":12"));

                b = IndexerNode.start(withPeers(
                        0, List.of("http://127.0.0.1:" + FreePort.any(), "http://127.0.0.1:" + a.httpPort()), 0));
                HttpJson httpB = new HttpJson(b.httpPort());
                assertEquals(
                        new JsonObject(httpA.get("/dump").body()),
                        new JsonObject(httpB.get("/dump").body()));
                assertEquals(
                        httpA.post("/query", QUERY).body(),
                        httpB.post("/query", QUERY).body());
                assertEquals(200, httpB.get("/ready").statusCode());
                assertTrue(httpB.get("/peers").body().contains("http://127.0.0.1:" + a.httpPort()));

                // The dump covers the history, so the first live batch (seq 2) just sets the watermark: nothing is
                // lost.
                assertEquals(201, httpB.post("/register", register).statusCode());
                engine.awaitSubscriber();
                engine.publish(
                        "",
                        2,
                        BatchEncoder.batch(
                                BatchEncoder.Format.VLLM_MAP,
                                1.0,
                                List.of(new EngineEvent.Remove(new long[] {300}, "GPU")),
                                0));
                Await.until(
                        "replica applied the live removal",
                        WAIT,
                        () -> httpB.post("/query", QUERY).body().contains("\"gpu\":8"));
                assertEquals(0, b.counters().warningCount(WarningKind.BATCHES_LOST));
            } finally {
                if (b != null) {
                    b.close();
                }
                a.close();
            }
        }
    }

    @Test
    void noReachablePeerStartsEmptyAndReady() throws Exception {
        IndexerNode b = IndexerNode.start(withPeers(0, List.of("http://127.0.0.1:" + FreePort.any()), 0));
        try {
            HttpJson http = new HttpJson(b.httpPort());
            assertEquals("{}", http.get("/dump").body());
            assertEquals(200, http.get("/ready").statusCode());
        } finally {
            b.close();
        }
    }

    @Test
    void theGateWaitsForTheMinimumNumberOfRegisteredWorkers() throws Exception {
        int port = FreePort.any();
        CompletableFuture<IndexerNode> starting = CompletableFuture.supplyAsync(() -> {
            try {
                return IndexerNode.start(withPeers(port, List.of(), 1));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        HttpJson http = new HttpJson(port);
        Await.until("HTTP is up before the gate opens", WAIT, () -> {
            try {
                return http.get("/health").statusCode() == 200;
            } catch (AssertionError notYet) {
                return false;
            }
        });
        // HTTP answers while the node is still "starting"; the initial-workers wait follows.
        Await.until("the gate waits for one registered worker", WAIT, () -> {
            var notReady = http.get("/ready");
            assertEquals(503, notReady.statusCode(), notReady.body());
            return notReady.body().contains("waiting for 1 registered workers");
        });
        assertEquals(
                201,
                http.post(
                                "/register",
                                "{\"instance_id\":5,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\","
                                        + "\"block_size\":4}")
                        .statusCode());
        IndexerNode node = starting.get(10, java.util.concurrent.TimeUnit.SECONDS);
        try {
            assertEquals(200, http.get("/ready").statusCode());
        } finally {
            node.close();
        }
    }

    @Test
    void minInitialWorkersMustBeANonNegativeInteger() {
        assertEquals(0, ServeConfig.minInitialWorkers(null));
        assertEquals(0, ServeConfig.minInitialWorkers(""));
        assertEquals(3, ServeConfig.minInitialWorkers(" 3 "));
        assertThrows(IllegalArgumentException.class, () -> ServeConfig.minInitialWorkers("-1"));
        assertThrows(IllegalArgumentException.class, () -> ServeConfig.minInitialWorkers("two"));
    }
}
