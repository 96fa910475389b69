package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SelectServicePerTest.ok;
import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Updates of a schedulable worker over real HTTP and real ZMQ (docs/api/selection.md#post-workers): a rank whose
 * endpoints stay keeps its listener, watermark, blocks and reservations; a changed rank starts again; a rank outside
 * the new range goes.
 */
class RankByRankUpdateTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int[] TOKENS = IntStream.rangeClosed(1, 16).toArray();

    private SelectServiceFixture service;
    private HttpJson http;
    private final List<TestPublisher> engines = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        service = SelectServiceFixture.start(Map.of(), SelectServiceConfig.on("127.0.0.1", 0));
        http = service.http;
    }

    @AfterEach
    void stop() {
        engines.forEach(TestPublisher::close);
        service.close();
    }

    @Test
    void aCapacityChangeKeepsEveryRanksBlocksAndWatermark() {
        List<TestPublisher> ranks = engines(2);
        JsonObject worker = worker(ranks).put("max_num_batched_tokens", 8192);
        register(ranks, worker);
        store(ranks.get(0), 0, 0, 2);
        store(ranks.get(1), 0, 0, 1);
        awaitDevice(Map.of("1/0", 2, "1/1", 1));

        JsonObject updated = ok(
                201,
                http.post(
                        "/workers",
                        worker.put("max_num_batched_tokens", 4096)
                                .put("taints", new JsonArray().add("slow"))
                                .encode()));
        assertEquals("schedulable", updated.getString("lifecycle"));
        assertEquals(4096, updated.getLong("max_num_batched_tokens"));
        assertEquals(Map.of("1/0", 2, "1/1", 1), device(), "no rank lost a block, and no engine published again");

        store(ranks.get(0), 1, 2, 3);
        awaitDevice(Map.of("1/0", 3, "1/1", 1));
        assertEquals(
                0L,
                service.node.counters().gapSnapshot().getOrDefault(EventCounters.GAP_ZMQ_SEQ, 0L),
                "seq 1 followed the kept watermark 0: no gap, nothing asked again");
    }

    @Test
    void aChangedEndpointRestartsThatRankAloneAndItsNewEngineCounts() {
        List<TestPublisher> ranks = engines(2);
        JsonObject worker = worker(ranks);
        register(ranks, worker);
        store(ranks.get(0), 0, 0, 2);
        store(ranks.get(1), 0, 0, 1);
        store(ranks.get(1), 1, 1, 2);
        awaitDevice(Map.of("1/0", 2, "1/1", 2));

        TestPublisher moved = engines(1).get(0);
        worker.getJsonObject("kv_events_endpoints").put("1", moved.endpoint());
        ok(201, http.post("/workers", worker.encode()));
        ranks.get(1).awaitUnsubscribe();
        moved.awaitSubscriber();
        assertEquals(Map.of("1/0", 2, "1/1", 0), device(), "rank 1's blocks went with its old engine");

        // A new engine numbers its batches from 0: the rank's watermark starts over, so seq 0 is not stale.
        store(moved, 0, 0, 3);
        awaitDevice(Map.of("1/0", 2, "1/1", 3));
    }

    /**
     * In a cluster every replica applies the same update; one that finds the rank already registered at its new
     * publisher (another replica moved it first) leaves it, with what that publisher stored meanwhile.
     */
    @Test
    void aRankAnotherReplicaMovedAlreadyKeepsWhatItsNewEngineStored() {
        List<TestPublisher> ranks = engines(2);
        JsonObject worker = worker(ranks);
        register(ranks, worker);
        store(ranks.get(1), 0, 0, 1);
        awaitDevice(Map.of("1/0", 0, "1/1", 1));

        TestPublisher moved = engines(1).get(0);
        // What the other replica did, through this node's own indexer API.
        HttpJson indexer = new HttpJson(service.node.httpPort());
        JsonObject rank1 = new JsonObject()
                .put("instance_id", 1)
                .put("model_name", "model")
                .put("dp_rank", 1);
        assertEquals(200, indexer.post("/unregister", rank1.encode()).statusCode());
        assertEquals(
                201,
                indexer.post(
                                "/register",
                                rank1.copy()
                                        .put("endpoint", moved.endpoint())
                                        .put("block_size", 4)
                                        .encode())
                        .statusCode());
        moved.awaitSubscriber();
        store(moved, 0, 0, 3);
        awaitDevice(Map.of("1/0", 0, "1/1", 3));

        worker.getJsonObject("kv_events_endpoints").put("1", moved.endpoint());
        ok(201, http.post("/workers", worker.encode()));
        assertEquals(Map.of("1/0", 0, "1/1", 3), device(), "the new engine's blocks stayed");
        store(moved, 1, 3, 4);
        awaitDevice(Map.of("1/0", 0, "1/1", 4));
    }

    @Test
    void shrinkingTheRangeDropsTheLeftRanksBlocksAndReservationsOnly() {
        List<TestPublisher> ranks = engines(3);
        JsonObject worker = worker(ranks);
        register(ranks, worker);
        for (int r = 0; r < 3; r++) {
            store(ranks.get(r), 0, 0, r + 1);
        }
        awaitDevice(Map.of("1/0", 1, "1/1", 2, "1/2", 3));
        book("on-0", 0);
        book("on-2", 2);

        ok(201, http.post("/workers", worker.put("data_parallel_size", 2).encode()));
        ranks.get(2).awaitUnsubscribe();
        assertEquals(Map.of("1/0", 1, "1/1", 2), device(), "rank 2 and its blocks are gone");
        assertEquals(
                Map.of("1/0", "1/1/0", "1/1", "0/0/0"),
                LoadStorm.reported(http),
                "rank 0 kept its reservation; rank 2's went with it");
        assertError(404, "reservation on-2 not found", http.send("DELETE", "/reservations/on-2"));

        ok(201, http.post("/workers", worker.put("data_parallel_size", 3).encode()));
        ranks.get(2).awaitSubscriber();
        store(ranks.get(2), 1, 0, 4);
        awaitDevice(Map.of("1/0", 1, "1/1", 2, "1/2", 4));
        assertEquals("1/1/0", LoadStorm.reported(http).get("1/0"));
    }

    @Test
    void aPatchChangesTheFieldsItNamesAndKeepsTheCacheView() {
        List<TestPublisher> ranks = engines(1);
        JsonObject posted = register(
                ranks, worker(ranks).put("max_num_batched_tokens", 8192).put("total_kv_blocks", 64));
        store(ranks.get(0), 0, 0, 2);
        awaitDevice(Map.of("1/0", 2));

        JsonObject patched = ok(
                200,
                http.patch(
                        "/workers/1",
                        new JsonObject().put("total_kv_blocks", 128).encode()));
        assertEquals(posted.copy().put("total_kv_blocks", 128), patched);
        assertEquals(Map.of("1/0", 2), device());
        store(ranks.get(0), 1, 2, 3);
        awaitDevice(Map.of("1/0", 3));
    }

    @Test
    void aPatchThatIsRefusedChangesNothing() {
        List<TestPublisher> ranks = engines(1);
        register(ranks, worker(ranks));
        store(ranks.get(0), 0, 0, 2);
        awaitDevice(Map.of("1/0", 2));
        String catalog = http.get("/workers").body();

        assertError(404, "worker 9 not found", http.patch("/workers/9", "{\"total_kv_blocks\":1}"));
        assertEquals(
                422,
                http.patch("/workers/1", "{\"total_kv_blocks\":1,\"data_parallel_size\":\"two\"}")
                        .statusCode());
        assertEquals(
                422,
                http.patch("/workers/1", "{\"total_kv_blocks\":1,\"data_parallel_size\":5000}")
                        .statusCode(),
                "over --max-worker-ranks");
        assertEquals(400, http.patch("/workers/1", "{\"total_kv_blocks\":").statusCode());

        assertEquals(catalog, http.get("/workers").body());
        assertEquals(Map.of("1/0", 2), device());
        store(ranks.get(0), 1, 2, 3);
        awaitDevice(Map.of("1/0", 3));
    }

    @Test
    void anEndpointThatCannotBeListenedToTakesTheWholeWorkerOut() {
        List<TestPublisher> ranks = engines(2);
        JsonObject worker = worker(ranks);
        register(ranks, worker);
        store(ranks.get(0), 0, 0, 2);
        awaitDevice(Map.of("1/0", 2, "1/1", 0));

        JsonObject broken = ok(
                200,
                http.patch(
                        "/workers/1",
                        new JsonObject()
                                .put(
                                        "kv_events_endpoints",
                                        new JsonObject()
                                                .put("0", ranks.get(0).endpoint())
                                                .put("1", "not-a-zmq-endpoint"))
                                .encode()));
        assertEquals("incomplete", broken.getString("lifecycle"));
        assertTrue(
                broken.getJsonArray("not_schedulable_reasons")
                        .getString(0)
                        .startsWith("reconciliation failed: invalid kv_events endpoint for worker 1 dp_rank 1"),
                broken.encode());
        ranks.forEach(TestPublisher::awaitUnsubscribe);

        register(ranks, worker);
        assertEquals(Map.of("1/0", 0, "1/1", 0), device(), "rank 0's blocks went with the worker");
    }

    private List<TestPublisher> engines(int n) {
        List<TestPublisher> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            TestPublisher p = new TestPublisher();
            engines.add(p);
            out.add(p);
        }
        return out;
    }

    /** Posts {@code worker}, whose ranks publish on {@code ranks}, and waits until each is subscribed to. */
    private JsonObject register(List<TestPublisher> ranks, JsonObject worker) {
        JsonObject record = ok(201, http.post("/workers", worker.encode()));
        assertEquals("schedulable", record.getString("lifecycle"), record.encode());
        ranks.forEach(TestPublisher::awaitSubscriber);
        return record;
    }

    /** Worker 1 of model "model", block size 4, one rank per publisher. */
    private static JsonObject worker(List<TestPublisher> ranks) {
        JsonObject endpoints = new JsonObject();
        for (int r = 0; r < ranks.size(); r++) {
            endpoints.put(Integer.toString(r), ranks.get(r).endpoint());
        }
        return new JsonObject()
                .put("worker_id", 1)
                .put("model_name", "model")
                .put("endpoint", "http://w1")
                .put("block_size", 4)
                .put("data_parallel_size", ranks.size())
                .put("kv_events_endpoints", endpoints);
    }

    /**
     * Publishes batch {@code seq} storing blocks {@code from .. to - 1} of the prompt on the device, each the child of
     * the one before; block i's engine hash is 100 + i.
     */
    private static void store(TestPublisher engine, long seq, int from, int to) {
        EngineEvent.Store store = new EngineEvent.Store(
                LongStream.range(100 + from, 100 + to).toArray(),
                from == 0 ? null : 100L + from - 1,
                Arrays.copyOfRange(TOKENS, from * 4, to * 4),
                4,
                "GPU",
                null);
        engine.publish("", seq, BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, List.of(store), null));
    }

    private void book(String id, int rank) {
        ok(
                201,
                http.post(
                        "/reservations",
                        new JsonObject()
                                .put("selection_id", id)
                                .put("model_name", "model")
                                .put("worker_id", 1)
                                .put("dp_rank", rank)
                                .put("sequence_hashes", new JsonArray().add(rank + 1))
                                .put("isl_tokens", 4)
                                .encode()));
    }

    /** Each rank's device prefix of the whole prompt, by "worker/rank", from /overlap_scores. */
    private Map<String, Integer> device() {
        JsonObject query = new JsonObject()
                .put("model_name", "model")
                .put("token_ids", new JsonArray(Arrays.stream(TOKENS).boxed().toList()));
        Map<String, Integer> out = new TreeMap<>();
        for (Object o : ok(200, http.post("/overlap_scores", query.encode())).getJsonArray("workers")) {
            JsonObject row = (JsonObject) o;
            out.put(row.getLong("worker_id") + "/" + row.getInteger("dp_rank"), row.getInteger("device_blocks"));
        }
        return out;
    }

    private void awaitDevice(Map<String, Integer> expected) {
        Await.equal("the ranks' device blocks", WAIT, new TreeMap<>(expected), this::device);
    }
}
