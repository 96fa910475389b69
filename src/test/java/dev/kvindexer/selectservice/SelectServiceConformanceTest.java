package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SelectServicePerTest.ok;
import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The selection service over real HTTP against the conformance checks of docs/api/selection.md (C1–C15, C19). */
class SelectServiceConformanceTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Map<String, String> EVENTS_OFF = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");
    private static final String WORKER_1 =
            "{\"worker_id\":1,\"model_name\":\"model\",\"endpoint\":\"http://worker-1:8000\"," + "\"block_size\":4}";

    @RegisterExtension
    final SelectServicePerTest service = new SelectServicePerTest();

    private HttpJson http;

    private void start(Map<String, String> env) throws Exception {
        http = service.start(env);
    }

    private String loads() {
        return service.worker1Loads();
    }

    @Test
    void c1NothingIsReadyWithAnEmptyCatalog() throws Exception {
        start(Map.of());
        HttpResponse<String> ready = http.get("/ready");
        assertEquals(503, ready.statusCode());
        assertEquals("{\"ready\":false,\"schedulable_workers\":0,\"workers\":[]}", ready.body());
        assertError(
                503,
                "no schedulable workers are available",
                http.post("/select", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"selection_id\":\"s1\"}"));
        HttpResponse<String> health = http.get("/health");
        assertEquals(200, health.statusCode());
        assertEquals("{\"status\":\"ok\"}", health.body());
        assertEquals(200, http.send("HEAD", "/health").statusCode());
    }

    @Test
    void c2QueueingNeedsTheBatchCapacity() throws Exception {
        start(Map.of("DYN_ROUTER_QUEUE_THRESHOLD", "1", "DYN_ROUTER_USE_KV_EVENTS", "false"));
        JsonObject w = ok(201, http.post("/workers", WORKER_1));
        assertEquals("incomplete", w.getString("lifecycle"));
        assertTrue(w.getJsonArray("not_schedulable_reasons").getString(0).contains("max_num_batched_tokens"));
        assertError(
                503,
                "no schedulable workers",
                http.post("/select", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}"));
    }

    /** Queueing (docs/api/selection.md#queueing): with every rank over the threshold a selection waits, first come first served. */
    @Test
    void overloadedPartitionsQueueSelectionsUntilLoadDrops() throws Exception {
        start(Map.of("DYN_ROUTER_QUEUE_THRESHOLD", "1", "DYN_ROUTER_USE_KV_EVENTS", "false"));
        JsonObject w = ok(201, http.post("/workers", WORKER_1.replace("}", ",\"max_num_batched_tokens\":4}")));
        assertEquals("schedulable", w.getString("lifecycle"));
        ok(
                200,
                http.post(
                        "/select_and_reserve",
                        "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4,5,6,7,8]," + "\"selection_id\":\"big\"}"));
        assertEquals("1/2/8", loads(), "8 prefill tokens: over 1 x 4");
        java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>> waiting =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> http.post(
                        "/select_and_reserve",
                        "{\"model_name\":\"model\",\"token_ids\":[9,9,9,9],\"selection_id\":\"queued\"}"));
        Await.until(
                "the second selection waits in the queue",
                WAIT,
                () -> new JsonArray(http.get("/loads").body()).getJsonObject(0).getInteger("pending_count") == 1);
        assertEquals(
                4, new JsonArray(http.get("/loads").body()).getJsonObject(0).getInteger("pending_isl_tokens"));
        assertFalse(waiting.isDone());
        assertEquals(200, http.post("/reservations/big/prefill_complete", "").statusCode());
        JsonObject queued = ok(200, waiting.get(10, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals("queued", queued.getString("selection_id"));
        assertEquals(
                0, new JsonArray(http.get("/loads").body()).getJsonObject(0).getInteger("pending_count"));
    }

    @Test
    void c3ABadEventsEndpointIsAReasonAndAPatchRepairsIt() throws Exception {
        start(Map.of());
        try (TestPublisher rank0 = new TestPublisher();
                TestPublisher rank1 = new TestPublisher()) {
            JsonObject bad = new JsonObject()
                    .put("worker_id", 7)
                    .put("model_name", "model")
                    .put("endpoint", "http://w7")
                    .put("block_size", 4)
                    .put("data_parallel_size", 2)
                    .put(
                            "kv_events_endpoints",
                            new JsonObject().put("0", rank0.endpoint()).put("1", "not-a-zmq-endpoint"));
            JsonObject w = ok(201, http.post("/workers", bad.encode()));
            assertEquals("incomplete", w.getString("lifecycle"));
            assertTrue(
                    w.getJsonArray("not_schedulable_reasons").getString(0).startsWith("reconciliation failed"),
                    w.encode());
            JsonObject patch = new JsonObject()
                    .put(
                            "kv_events_endpoints",
                            new JsonObject().put("0", rank0.endpoint()).put("1", rank1.endpoint()));
            JsonObject fixed = ok(200, http.patch("/workers/7", patch.encode()));
            assertEquals("schedulable", fixed.getString("lifecycle"), fixed.encode());
            assertFalse(fixed.containsKey("not_schedulable_reasons"));
            rank0.awaitSubscriber();
            rank1.awaitSubscriber();
            assertError(404, "worker 9 not found", http.patch("/workers/9", patch.encode()));
        }
    }

    @Test
    void c4TiedWorkersAreBothChosenOverManyCalls() throws Exception {
        start(EVENTS_OFF);
        ok(201, http.post("/workers", WORKER_1));
        ok(201, http.post("/workers", WORKER_1.replace("\"worker_id\":1", "\"worker_id\":2")));
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            JsonObject s = ok(200, http.post("/select", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}"));
            seen.add(s.getLong("worker_id"));
            assertEquals(4, s.getLong("effective_prefill_tokens"));
            assertEquals(0, s.getJsonObject("overlap").getLong("longest_matched"));
            assertEquals(
                    new JsonObject().put("0", 0), s.getJsonObject("overlap").getJsonObject("dp"));
            assertFalse(s.containsKey("selection_id"));
            assertFalse(s.containsKey("cached_tokens") || s.containsKey("effective_overlap_blocks"));
        }
        assertEquals(Set.of(1L, 2L), seen);
        assertEquals("0/0/0", loads(), "/select books nothing");
    }

    @Test
    void c5TheReservationLifecycle() throws Exception {
        start(EVENTS_OFF);
        JsonObject w = ok(201, http.post("/workers", WORKER_1));
        assertEquals("schedulable", w.getString("lifecycle"));
        String body = "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"selection_id\":\"r1\"}";
        JsonObject r1 = ok(200, http.post("/select_and_reserve", body));
        assertEquals("r1", r1.getString("selection_id"));
        assertEquals(4, r1.getLong("effective_prefill_tokens"));
        assertEquals(4, r1.getLong("isl_tokens"));
        assertTrue(r1.getBoolean("track_prefill_tokens"));
        assertEquals("1/1/4", loads());
        assertError(409, "r1", http.post("/select_and_reserve", body));
        assertEquals("1/1/4", loads());
        assertEquals(
                "{\"status\":\"ok\"}",
                http.post("/reservations/r1/prefill_complete", "").body());
        assertEquals("1/1/0", loads());
        assertEquals(200, http.post("/reservations/r1/prefill_complete", "").statusCode(), "repeating it is harmless");
        assertEquals(200, http.post("/reservations/r1/output_block", "{}").statusCode());
        assertEquals("1/2/0", loads());
        assertError(
                400,
                "decay_fraction must be between 0.0 and 1.0",
                http.post("/reservations/r1/output_block", "{\"decay_fraction\":1.5}"));
        assertEquals("1/2/0", loads());
        assertEquals(
                200,
                http.post("/reservations/r1/output_block", "{\"decay_fraction\":0.5}")
                        .statusCode());
        assertEquals("1/2/0", loads(), "three blocks only r1 holds, weighted a half: round(1.5)");
        assertEquals(200, http.send("DELETE", "/reservations/r1").statusCode());
        assertEquals("0/0/0", loads());
        assertError(404, "reservation r1 not found", http.send("DELETE", "/reservations/r1"));
        assertError(404, "reservation r1 not found", http.post("/reservations/r1/prefill_complete", ""));
        JsonObject generated =
                ok(200, http.post("/select_and_reserve", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}"));
        assertEquals(36, generated.getString("selection_id").length(), "an absent id is a UUID");
    }

    @Test
    void c6SelectThenReserve() throws Exception {
        start(EVENTS_OFF);
        ok(201, http.post("/workers", WORKER_1));
        ok(200, http.post("/select", "{\"model_name\":\"model\",\"selection_id\":\"s1\",\"token_ids\":[1,2,3,4]}"));
        assertEquals("0/0/0", loads());
        assertError(
                404,
                "no pending selection s1",
                http.post("/reservations", "{\"model_name\":\"other\",\"selection_id\":\"s1\"}"));
        HttpResponse<String> booked = http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s1\"}");
        assertEquals(201, booked.statusCode(), booked.body());
        assertEquals(
                "{\"selection_id\":\"s1\",\"model_name\":\"model\",\"routing_group\":\"default\",\"worker_id\":1,"
                        + "\"dp_rank\":0,\"endpoint\":\"http://worker-1:8000\"}",
                booked.body());
        assertEquals("1/1/4", loads());
        assertError(
                404,
                "no pending selection s1 for model=model routing_group=default (expired, already used, or "
                        + "never selected)",
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s1\"}"));
        assertError(
                400,
                "must not exceed isl_tokens",
                http.post(
                        "/reservations",
                        "{\"model_name\":\"model\","
                                + "\"selection_id\":\"x\",\"worker_id\":1,\"sequence_hashes\":[1],\"isl_tokens\":4,"
                                + "\"effective_prefill_tokens\":5}"));
        HttpResponse<String> explicit = http.post(
                "/reservations",
                "{\"model_name\":\"model\",\"selection_id\":\"x\","
                        + "\"worker_id\":1,\"sequence_hashes\":[1],\"isl_tokens\":4,\"effective_prefill_tokens\":3}");
        assertEquals(201, explicit.statusCode(), explicit.body());
        assertEquals("2/2/7", loads(), "hash 1 is a block of its own; 3 more prefill tokens");
        long s1Block = BlockHasher.sequenceHashes(
                BlockHasher.localHashes(new int[] {1, 2, 3, 4}, 4, BlockHasher.BASE_SEED))[0];
        assertEquals(
                201,
                http.post(
                                "/reservations",
                                "{\"model_name\":\"model\",\"selection_id\":\"z\","
                                        + "\"worker_id\":1,\"sequence_hashes\":[" + s1Block + "],\"isl_tokens\":4}")
                        .statusCode());
        assertEquals("3/2/7", loads(), "the same block as s1's is counted once; no hint books no prefill");
        assertError(
                404,
                "WorkerWithDpRank { worker_id: 1, dp_rank: 3 }",
                http.post(
                        "/reservations",
                        "{\"model_name\":\"model\",\"selection_id\":\"y\",\"worker_id\":1,\"dp_rank\":3,"
                                + "\"sequence_hashes\":[1],\"isl_tokens\":4}"));
        assertError(
                404,
                "schedulable worker 5 not found for model=model routing_group=default",
                http.post(
                        "/reservations",
                        "{\"model_name\":\"model\",\"selection_id\":\"y\",\"worker_id\":5,"
                                + "\"sequence_hashes\":[1],\"isl_tokens\":4}"));
    }

    @Test
    void c7OverlapScoresListEverySchedulableRank() throws Exception {
        start(EVENTS_OFF);
        ok(201, http.post("/workers", WORKER_1));
        ok(
                201,
                http.post(
                        "/workers",
                        "{\"worker_id\":2,\"model_name\":\"model\",\"endpoint\":\"http://worker-2:8000\","
                                + "\"block_size\":4,\"data_parallel_start_rank\":2,\"data_parallel_size\":2}"));
        JsonObject s = ok(200, http.post("/overlap_scores", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}"));
        assertEquals(4, s.getInteger("block_size"));
        assertEquals(1, s.getInteger("num_blocks"));
        JsonArray rows = s.getJsonArray("workers");
        assertEquals(3, rows.size());
        List<String> ranks = rows.stream()
                .map(o -> ((JsonObject) o).getLong("worker_id") + ":" + ((JsonObject) o).getInteger("dp_rank"))
                .toList();
        assertEquals(List.of("1:0", "2:2", "2:3"), ranks);
        JsonObject first = rows.getJsonObject(0);
        assertEquals(0, first.getInteger("device_blocks"));
        assertEquals(0.0, first.getDouble("router_credit_blocks"));
        assertTrue(first.containsKey("shared_beyond_device_blocks")
                && first.getValue("shared_beyond_device_blocks") == null);
        assertFalse(s.getJsonObject("shared_cache").getBoolean("enabled"));
    }

    @Test
    void c8c9c10BadPromptsAndBookings() throws Exception {
        start(EVENTS_OFF);
        ok(201, http.post("/workers", WORKER_1));
        assertError(
                400,
                "block_hashes length 1 must match sequence_hashes length 2",
                http.post(
                        "/select",
                        "{\"model_name\":\"model\",\"block_hashes\":[1],\"sequence_hashes\":[1,2],\"isl_tokens\":4}"));
        assertError(
                400,
                "block_hashes is required without token_ids",
                http.post("/select", "{\"model_name\":\"model\",\"isl_tokens\":4}"));
        assertError(
                400,
                "sequence_hashes is required without token_ids",
                http.post("/select", "{\"model_name\":\"model\",\"block_hashes\":[1],\"isl_tokens\":4}"));
        assertError(
                400,
                "isl_tokens is required without token_ids",
                http.post("/select", "{\"model_name\":\"model\",\"block_hashes\":[1],\"sequence_hashes\":[1]}"));
        assertError(
                400,
                "isl_tokens must be greater than 0",
                http.post("/select", "{\"model_name\":\"model\",\"token_ids\":[]}"));
        assertError(422, "selection_id", http.post("/reservations", "{\"model_name\":\"model\",\"worker_id\":1}"));
        assertError(
                404,
                "no pending selection",
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"nope\"}"));
        assertError(
                422,
                "router_temperature",
                http.post(
                        "/select",
                        "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"router_config_override\":{\"router_temperature\":-1}}"));
        assertError(400, "Failed to parse the request body as JSON", http.post("/select", "{not json"));
        assertError(415, "Content-Type", http.post("/select", "{}", "text/plain"));
        assertError(
                422,
                "i64",
                http.post(
                        "/select",
                        "{\"model_name\":\"model\",\"block_hashes\":[9223372036854775808],"
                                + "\"sequence_hashes\":[1],\"isl_tokens\":4}"));
        assertEquals("0/0/0", loads(), "refusals change nothing");
    }

    @Test
    void c11c12ReplaysFollowTheCatalog() throws Exception {
        start(EVENTS_OFF);
        ok(201, http.post("/workers", WORKER_1));
        ok(200, http.post("/select", "{\"model_name\":\"model\",\"selection_id\":\"s1\",\"token_ids\":[1,2,3,4]}"));
        JsonObject deleted = ok(200, http.send("DELETE", "/workers/1"));
        assertEquals("unschedulable", deleted.getString("lifecycle"));
        assertError(404, "worker 1 not found", http.send("DELETE", "/workers/1"));
        assertError(
                503,
                "no schedulable workers",
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s1\"}"));
        ok(201, http.post("/workers", WORKER_1));
        assertEquals(
                201,
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s1\"}")
                        .statusCode(),
                "the failed replay kept the entry");

        ok(200, http.post("/select", "{\"model_name\":\"model\",\"selection_id\":\"s2\",\"token_ids\":[5,6,7,8]}"));
        ok(200, http.patch("/workers/1", "{\"data_parallel_start_rank\":1,\"data_parallel_size\":1}"));
        assertError(
                404,
                "schedulable worker 1 (dp_rank 0) not found",
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s2\"}"));
        ok(200, http.patch("/workers/1", "{\"data_parallel_start_rank\":0,\"data_parallel_size\":1}"));
        assertEquals(
                201,
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s2\"}")
                        .statusCode());
    }

    @Test
    void c13PrefillTrackingOffBooksNoPrefill() throws Exception {
        start(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_TRACK_PREFILL_TOKENS", "false"));
        ok(201, http.post("/workers", WORKER_1));
        ok(200, http.post("/select", "{\"model_name\":\"model\",\"selection_id\":\"s1\",\"token_ids\":[1,2,3,4]}"));
        ok(201, http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s1\"}"));
        assertEquals("1/1/0", loads());
        // Another prompt: with KV events off the first booking's blocks count as cached
        // (docs/api/selection.md#startup-and-kv-indexing-modes).
        ok(
                200,
                http.post(
                        "/select",
                        "{\"model_name\":\"model\",\"selection_id\":\"s2\",\"token_ids\":[5,6,7,8],"
                                + "\"router_config_override\":{\"track_prefill_tokens\":true}}"));
        ok(201, http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"s2\"}"));
        assertEquals("2/2/4", loads());
    }

    /** docs/api/selection.md#startup-and-kv-indexing-modes and E16: with KV events off a booking is itself recorded in the index, for the router TTL. */
    @Test
    void withKvEventsOffBookingsAreTheIndexUntilTheirTtl() throws Exception {
        start(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_TTL_SECS", "1"));
        ok(201, http.post("/workers", WORKER_1));
        ok(
                200,
                http.post(
                        "/select_and_reserve",
                        "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"selection_id\":\"r1\"}"));
        String longer = "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4,5,6,7,8]}";
        Await.equal(
                "E16 in the approximate mode: dev 1, so 4 + 4 prefill tokens",
                WAIT,
                new JsonArray()
                        .add(new JsonObject()
                                .put("worker_id", 1)
                                .put("dp_rank", 0)
                                .put("potential_prefill_tokens", 8)
                                .put("potential_decode_blocks", 2)
                                .put("active_requests", 1)),
                () -> new JsonArray(http.post("/potential_loads", longer).body()));
        assertEquals(
                1,
                ok(200, http.post("/overlap_scores", longer))
                        .getJsonArray("workers")
                        .getJsonObject(0)
                        .getInteger("device_blocks"));
        Await.equal(
                "the recorded blocks leave after the TTL",
                WAIT,
                0,
                () -> ok(200, http.post("/overlap_scores", longer))
                        .getJsonArray("workers")
                        .getJsonObject(0)
                        .getInteger("device_blocks"));
        assertEquals("1/1/4", loads(), "the reservation itself stays");
        ok(
                200,
                http.post(
                        "/select_and_reserve",
                        "{\"model_name\":\"model\",\"block_hashes\":[1,1],"
                                + "\"sequence_hashes\":[7,7],\"isl_tokens\":8,\"selection_id\":\"hostile\"}"));
        assertEquals(
                200, http.get("/dump").statusCode(), "a repeated hash in a recorded booking is refused by the index");
    }

    @Test
    void metricsShowWorkersReservationsAndAnsweredRequests() throws Exception {
        start(EVENTS_OFF);
        ok(201, http.post("/workers", WORKER_1));
        ok(200, http.post("/select_and_reserve", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}"));
        assertError(404, "reservation nope not found", http.send("DELETE", "/reservations/nope"));
        HttpResponse<String> m = http.get("/metrics");
        assertEquals(200, m.statusCode());
        String text = m.body();
        assertTrue(text.contains("\nkvindexer_select_schedulable_workers 1\n"), text);
        assertTrue(text.contains("\nkvindexer_select_active_reservations 1\n"), text);
        assertTrue(
                text.contains("kvindexer_select_requests_total{route=\"/select_and_reserve\",status=\"200\"} 1"), text);
        assertTrue(
                text.contains("kvindexer_select_errors_total{route=\"/reservations/:selection_id\",status=\"404\"} 1"),
                text);
        assertTrue(text.contains("jvm_memory_used_bytes"), "the JVM meters follow");
    }

    @Test
    void c14TheDumpListsARegisteredWorkersPartition() throws Exception {
        start(EVENTS_OFF);
        ok(201, http.post("/workers", WORKER_1));
        JsonObject dump = new JsonObject(http.get("/dump").body());
        assertEquals(4, dump.getJsonObject("model:default").getInteger("block_size"));
        assertEquals(new JsonArray(), dump.getJsonObject("model:default").getJsonArray("events"));
    }

    @Test
    void c15c19ReplicaSyncOffUnknownRoutesAndMethods() throws Exception {
        start(EVENTS_OFF);
        assertEquals("[]", http.get("/replica_sync/peers").body());
        assertError(
                409,
                "replica sync is disabled",
                http.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:19092\"}"));
        assertError(404, "route not found", http.get("/nope"));
        assertError(405, "method not allowed", http.get("/select"));
    }

    @Test
    void catalogRecordsEchoWhatWasSentAndListSorted() throws Exception {
        start(EVENTS_OFF);
        String sent = "{\"worker_id\":9,\"model_name\":\"b\",\"endpoint\":\"http://w9\",\"block_size\":16,"
                + "\"total_kv_blocks\":4096,\"taints\":[\"x\"],\"topology_domains\":{\"rack\":\"r1\"},\"stable_routing_id\":\"s\"}";
        JsonObject w = ok(201, http.post("/workers", sent));
        assertEquals(
                "{\"worker_id\":9,\"model_name\":\"b\",\"routing_group\":\"default\",\"lifecycle\":\"schedulable\","
                        + "\"endpoint\":\"http://w9\",\"kv_events_endpoint\":null,\"replay_endpoint\":null,\"block_size\":16,"
                        + "\"data_parallel_start_rank\":null,\"data_parallel_size\":null,\"max_num_batched_tokens\":null,"
                        + "\"total_kv_blocks\":4096,\"stable_routing_id\":\"s\",\"is_eagle\":null,\"taints\":[\"x\"],"
                        + "\"topology_domains\":{\"rack\":\"r1\"},\"kv_transfer_domain\":null,\"kv_transfer_enforcement\":null,"
                        + "\"kv_transfer_preferred_weight\":null}",
                w.encode());
        ok(201, http.post("/workers", WORKER_1));
        ok(201, http.post("/workers", "{\"worker_id\":3,\"model_name\":\"b\",\"block_size\":16}"));
        JsonArray all = new JsonArray(http.get("/workers").body());
        assertEquals(
                List.of(3L, 9L, 1L),
                all.stream().map(o -> ((JsonObject) o).getLong("worker_id")).toList(),
                "sorted by model, group, id");
        assertEquals(1, new JsonArray(http.get("/workers?model_name=model").body()).size());
        assertEquals(
                "endpoint is required",
                all.getJsonObject(0).getJsonArray("not_schedulable_reasons").getString(0));
        JsonObject ready = ok(200, http.get("/ready"));
        assertTrue(ready.getBoolean("ready"));
        assertEquals(2, ready.getInteger("schedulable_workers"));
    }

    /** E4 over real ZMQ: lower-tier blocks earn weighted credit, and /select reports the chosen worker's overlap. */
    @Test
    void kvAwareSelectionOverPublishedEvents() throws Exception {
        start(Map.of());
        try (TestPublisher w1 = new TestPublisher();
                TestPublisher w2 = new TestPublisher()) {
            for (int id = 1; id <= 2; id++) {
                ok(
                        201,
                        http.post(
                                "/workers",
                                new JsonObject()
                                        .put("worker_id", id)
                                        .put("model_name", "model")
                                        .put("endpoint", "http://w" + id)
                                        .put("block_size", 4)
                                        .put("kv_events_endpoint", (id == 1 ? w1 : w2).endpoint())
                                        .encode()));
            }
            w1.awaitSubscriber();
            w2.awaitSubscriber();
            int[] tokens = IntStream.rangeClosed(1, 32).toArray();
            // W1: 2 device blocks and 4 host blocks beyond them; W2: 4 device blocks (docs/api/selection.md#cost E4
            // with B = 4).
            w1.publish(
                    "",
                    0,
                    batch(
                            new EngineEvent.Store(new long[] {11, 12}, null, Arrays.copyOf(tokens, 8), 4, "GPU", null),
                            new EngineEvent.Store(
                                    new long[] {13, 14, 15, 16},
                                    12L,
                                    Arrays.copyOfRange(tokens, 8, 24),
                                    4,
                                    "CPU",
                                    null)));
            w2.publish(
                    "",
                    0,
                    batch(new EngineEvent.Store(
                            new long[] {21, 22, 23, 24}, null, Arrays.copyOf(tokens, 16), 4, "GPU", null)));
            JsonObject query = new JsonObject()
                    .put("model_name", "model")
                    .put(
                            "token_ids",
                            new JsonArray(Arrays.stream(tokens).boxed().toList()));
            Await.until("both engines' blocks are indexed", WAIT, () -> {
                JsonArray rows =
                        ok(200, http.post("/overlap_scores", query.encode())).getJsonArray("workers");
                return rows.getJsonObject(0).getInteger("host_pinned_extension_blocks") == 4
                        && rows.getJsonObject(1).getInteger("device_blocks") == 4;
            });
            JsonObject s = ok(200, http.post("/select", query.encode()));
            assertEquals(1, s.getLong("worker_id"), "W1: 11 against W2's 12 (docs/api/selection.md#cost E4)");
            assertEquals(32 - 20, s.getLong("effective_prefill_tokens"), "cached round((2 + 0.75 * 4) * 4) = 20");
            assertEquals(
                    new JsonObject()
                            .put("longest_matched", 24)
                            .put("gpu", 8)
                            .put("dp", new JsonObject().put("0", 8))
                            .put("cpu", 24)
                            .put("disk", 24),
                    s.getJsonObject("overlap"));
            long[] local = BlockHasher.localHashes(tokens, 4, BlockHasher.BASE_SEED);
            JsonObject byHash = new JsonObject()
                    .put("model_name", "model")
                    .put(
                            "block_hashes",
                            new JsonArray(Arrays.stream(local).boxed().toList()))
                    .put(
                            "sequence_hashes",
                            new JsonArray(Arrays.stream(BlockHasher.sequenceHashes(local))
                                    .boxed()
                                    .toList()))
                    .put("isl_tokens", 32);
            assertEquals(
                    1,
                    ok(200, http.post("/select", byHash.encode())).getLong("worker_id"),
                    "the hash form matches the same blocks");
        }
    }

    private static byte[] batch(EngineEvent... events) {
        return BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, Arrays.asList(events), 0);
    }
}
