package dev.kvindexer.tracker;

import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SlotTrackerCommand;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.metrics.VertxMeters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The slot tracker over real HTTP (docs/api/slot-tracker.md, Dynamo's standalone slot tracker): every route, code and body. */
class SlotTrackerHttpTest {
    private static final String OK = "{\"status\":\"ok\"}";
    private static final String REGISTER =
            "{\"worker_id\":7,\"model_name\":\"llama-3-8b\",\"routing_group\":\"default\","
                    + "\"block_size\":16,\"dp_start\":0,\"dp_size\":2}";
    private static final String ADD =
            "{\"model_name\":\"llama-3-8b\",\"routing_group\":\"default\",\"request_id\":\"req-123\","
                    + "\"worker_id\":7,\"dp_rank\":0,\"sequence_hashes\":[101,-22,303],\"new_isl_tokens\":48}";
    private static final String REQ =
            "{\"model_name\":\"llama-3-8b\",\"routing_group\":\"default\",\"request_id\":\"req-123\"}";

    private final VertxMeters meters = new VertxMeters();
    private final Vertx vertx =
            meters.instrument(Vertx.builder(), new VertxOptions()).build();
    private HttpJson http;

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private void start(long ttlMillis, long cleanupMillis) throws Exception {
        SlotTrackerVerticle v = SlotTrackerCommand.deploy(
                vertx, new SlotTrackerConfig("127.0.0.1", 0, ttlMillis, cleanupMillis, null), meters::scrape);
        http = new HttpJson(v.actualPort());
    }

    private void start() throws Exception {
        start(SlotTrackerConfig.DEFAULT_REQUEST_TTL_MILLIS, SlotTrackerConfig.DEFAULT_CLEANUP_INTERVAL_MILLIS);
    }

    private static void assertAnswer(int status, String body, HttpResponse<String> r) {
        assertEquals(status, r.statusCode(), r.body());
        assertEquals(body, r.body());
    }

    private static Set<JsonObject> asSet(String jsonArray) {
        Set<JsonObject> out = new HashSet<>();
        new JsonArray(jsonArray).forEach(o -> out.add((JsonObject) o));
        return out;
    }

    /** The seed's example end to end: register, add, loads, projection, prefill complete, free, unregister. */
    @Test
    void theDocumentedConversation() throws Exception {
        start();
        HttpResponse<String> health = http.get("/health");
        assertEquals(200, health.statusCode());
        assertEquals("", health.body());

        assertAnswer(201, OK, http.post("/register", REGISTER));
        assertAnswer(200, "[" + REGISTER + "]", http.get("/workers"));
        assertAnswer(201, OK, http.post("/add", ADD));
        assertAnswer(
                200,
                "[{\"model_name\":\"llama-3-8b\",\"routing_group\":\"default\",\"worker_id\":7,\"dp_rank\":0,"
                        + "\"active_prefill_tokens\":48,\"active_decode_blocks\":3},{\"model_name\":\"llama-3-8b\",\"routing_group\":"
                        + "\"default\",\"worker_id\":7,\"dp_rank\":1,\"active_prefill_tokens\":0,\"active_decode_blocks\":0}]",
                http.get("/loads"));
        HttpResponse<String> potential = http.post(
                "/potential_loads",
                "{\"model_name\":\"llama-3-8b\",\"routing_group\":"
                        + "\"default\",\"sequence_hashes\":[101,-22,303,404],\"new_isl_tokens\":48}");
        assertEquals(200, potential.statusCode());
        assertEquals(
                Set.of(
                        new JsonObject("{\"worker_id\":7,\"dp_rank\":0,\"potential_prefill_tokens\":96,"
                                + "\"potential_decode_blocks\":4,\"active_requests\":1}"),
                        new JsonObject("{\"worker_id\":7,\"dp_rank\":1,"
                                + "\"potential_prefill_tokens\":48,\"potential_decode_blocks\":4,"
                                + "\"active_requests\":0}")),
                asSet(potential.body()));

        assertAnswer(200, OK, http.post("/prefill_complete", REQ));
        assertAnswer(200, OK, http.post("/prefill_complete", REQ));
        assertTrue(http.get("/loads")
                .body()
                .contains("\"dp_rank\":0,\"active_prefill_tokens\":0,\"active_decode_blocks\":3"));
        assertAnswer(200, OK, http.post("/free", REQ));
        assertAnswer(200, OK, http.post("/free", REQ));
        assertTrue(http.get("/loads")
                .body()
                .contains("\"dp_rank\":0,\"active_prefill_tokens\":0,\"active_decode_blocks\":0"));
        String unregister = "{\"worker_id\":7,\"model_name\":\"llama-3-8b\"}";
        assertAnswer(200, OK, http.post("/unregister", unregister));
        assertAnswer(200, "[]", http.get("/workers"));
        assertError(
                404,
                "worker 7 not found for model=llama-3-8b routing_group=default",
                http.post("/unregister", unregister));
        assertError(404, "no slot tracker for model=llama-3-8b routing_group=default", http.post("/free", REQ));
    }

    @Test
    void signedHashesAreTheirU64BitPatterns() throws Exception {
        start();
        http.post("/register", REGISTER);
        http.post("/add", ADD);
        HttpResponse<String> potential = http.post(
                "/potential_loads", "{\"model_name\":\"llama-3-8b\"," + "\"sequence_hashes\":[18446744073709551594]}");
        assertTrue(
                asSet(potential.body())
                        .contains(new JsonObject("{\"worker_id\":7,\"dp_rank\":0,"
                                + "\"potential_prefill_tokens\":48,\"potential_decode_blocks\":3,"
                                + "\"active_requests\":1}")),
                "-22 is 18446744073709551594");
        assertAnswer(
                201,
                OK,
                http.post(
                        "/register",
                        "{\"worker_id\":18446744073709551615,\"model_name\":\"m\","
                                + "\"block_size\":4,\"dp_start\":4294967293,\"dp_size\":2}"));
        assertAnswer(
                200,
                "[{\"worker_id\":18446744073709551615,\"model_name\":\"m\",\"routing_group\":\"default\","
                        + "\"block_size\":4,\"dp_start\":4294967293,\"dp_size\":2}]",
                http.get("/workers?model_name=m"));
        assertAnswer(200, "[]", http.get("/loads?model_name=m&routing_group=other"));
        assertEquals(
                2,
                new JsonArray(http.get("/loads?routing_group=default&model_name=llama-3-8b")
                                .body())
                        .size());
    }

    @Test
    void everyRefusalHasItsCodeAndChangesNothing() throws Exception {
        start();
        http.post("/register", REGISTER);
        http.post("/add", ADD);
        String before = http.get("/loads").body();

        assertError(
                400,
                "block_size must be greater than 0",
                http.post("/register", REGISTER.replace("\"block_size\":16", "\"block_size\":0")));
        assertError(
                400,
                "dp_size must be greater than 0",
                http.post("/register", REGISTER.replace("\"dp_size\":2", "\"dp_size\":0")));
        assertError(
                400,
                "dp range overflows u32: start=4294967295 size=2",
                http.post("/register", REGISTER.replace("\"dp_start\":0", "\"dp_start\":4294967295")));
        // Dynamo adds the two as u32 with checked_add: a sum of exactly 2^32 overflows too.
        assertError(
                400,
                "dp range overflows u32: start=4294967294 size=2",
                http.post("/register", REGISTER.replace("\"dp_start\":0", "\"dp_start\":4294967294")));
        assertError(
                400,
                "dp_size 4097 exceeds the maximum 4096",
                http.post("/register", REGISTER.replace("\"dp_size\":2", "\"dp_size\":4097")));
        assertError(
                409,
                "block_size mismatch for model=llama-3-8b routing_group=default: existing=16, requested=32",
                http.post("/register", REGISTER.replace("\"block_size\":16", "\"block_size\":32")));
        assertError(409, "worker 7 already registered", http.post("/register", REGISTER));
        assertError(422, "missing field `dp_size`", http.post("/register", REGISTER.replace(",\"dp_size\":2", "")));
        assertError(
                422, "`worker_id`", http.post("/register", REGISTER.replace("\"worker_id\":7", "\"worker_id\":-7")));
        assertError(400, "Failed to parse the request body as JSON", http.post("/register", "{\"worker_id\":"));
        assertError(415, "Content-Type: application/json", http.post("/register", REGISTER, "text/plain"));
        assertError(413, "limit", http.post("/register", "{\"pad\":\"" + "x".repeat(2 * 1024 * 1024) + "\"}"));
        assertError(413, "limit", http.send("GET", "/loads", "x".repeat(3 * 1024 * 1024))); // every route has a limit

        assertError(
                409,
                "Request req-123 already exists (assigned to worker WorkerWithDpRank { worker_id: 7, dp_rank: 0 })",
                http.post("/add", ADD.replace("\"dp_rank\":0", "\"dp_rank\":1")));
        assertError(
                404,
                "Worker WorkerWithDpRank { worker_id: 7, dp_rank: 2 } not found",
                http.post("/add", ADD.replace("req-123", "r2").replace("\"dp_rank\":0", "\"dp_rank\":2")));
        assertError(
                404,
                "Worker WorkerWithDpRank { worker_id: 8, dp_rank: 0 } not found",
                http.post("/add", ADD.replace("req-123", "r2").replace("\"worker_id\":7", "\"worker_id\":8")));
        assertError(
                404,
                "no slot tracker for model=other routing_group=default",
                http.post("/add", ADD.replace("llama-3-8b", "other")));
        assertError(
                422,
                "missing field `sequence_hashes`",
                http.post("/add", ADD.replace("req-123", "r2").replace(",\"sequence_hashes\":[101,-22,303]", "")));
        assertError(
                422,
                "sequence_hashes[1]",
                http.post("/add", ADD.replace("req-123", "r2").replace("-22", "\"x\"")));
        assertError(404, "Request nope not found", http.post("/prefill_complete", REQ.replace("req-123", "nope")));
        assertError(404, "no slot tracker", http.post("/prefill_complete", REQ.replace("\"default\"", "\"g2\"")));
        assertError(
                404,
                "no slot tracker",
                http.post("/potential_loads", "{\"model_name\":\"other\",\"sequence_hashes\":[]}"));
        assertError(422, "missing field `model_name`", http.post("/free", "{\"request_id\":\"req-123\"}"));
        assertError(404, "route not found", http.get("/nothing-here"));
        assertError(405, "method not allowed", http.get("/add"));
        assertError(405, "method not allowed", http.post("/loads", "{}"));

        assertEquals(before, http.get("/loads").body(), "no refused request changed any load");
        assertEquals(1, new JsonArray(http.get("/workers").body()).size());
    }

    /**
     * Dynamo's trackers are per (model, routing group): worker and request ids are scoped by the group, the rows name
     * it, and an older client's {@code tenant_id} still picks its group when it sends no {@code routing_group}.
     */
    @Test
    void routingGroupsScopeWorkersAndRequests() throws Exception {
        start();
        String inA = REGISTER.replace("\"routing_group\":\"default\"", "\"routing_group\":\"a\"");
        String inB = REGISTER.replace("\"routing_group\":\"default\"", "\"routing_group\":\"b\"");
        assertAnswer(201, OK, http.post("/register", inA));
        assertAnswer(201, OK, http.post("/register", inB));
        assertError(
                409, "worker 7 already registered for model=llama-3-8b routing_group=b", http.post("/register", inB));
        assertAnswer(201, OK, http.post("/add", ADD.replace("\"default\"", "\"a\"")));
        assertAnswer(201, OK, http.post("/add", ADD.replace("\"default\"", "\"b\"")));
        assertError(
                409,
                "Request req-123 already exists",
                http.post("/add", ADD.replace("\"default\"", "\"b\"").replace("\"dp_rank\":0", "\"dp_rank\":1")));
        assertError(404, "no slot tracker for model=llama-3-8b routing_group=default", http.post("/add", ADD));
        assertAnswer(200, "[" + inB + "]", http.get("/workers?routing_group=b"));
        assertEquals(2, new JsonArray(http.get("/workers").body()).size(), "no filter lists every group");
        assertEquals(2, new JsonArray(http.get("/loads?routing_group=a").body()).size());

        // An older client: tenant_id names the group, in bodies and in filters.
        String legacy = REQ.replace("\"routing_group\":\"default\"", "\"tenant_id\":\"a\"");
        assertAnswer(200, OK, http.post("/prefill_complete", legacy));
        assertAnswer(200, "[" + inB + "]", http.get("/workers?tenant_id=b"));
        assertTrue(http.get("/loads?tenant_id=a")
                .body()
                .contains("\"dp_rank\":0,\"active_prefill_tokens\":0,\"active_decode_blocks\":3"));
        assertTrue(http.get("/loads?routing_group=b")
                .body()
                .contains("\"dp_rank\":0,\"active_prefill_tokens\":48,\"active_decode_blocks\":3"));
    }

    @Test
    void metricsCountRequestsErrorsActiveRequestsAndWorkers() throws Exception {
        start();
        http.post("/register", REGISTER);
        http.post("/add", ADD);
        http.post("/add", ADD);
        http.get("/nothing-here");
        String metrics = http.get("/metrics").body();
        for (String line : List.of(
                "kvindexer_slot_tracker_requests_total{route=\"/register\",status=\"201\"} 1",
                "kvindexer_slot_tracker_requests_total{route=\"/add\",status=\"201\"} 1",
                "kvindexer_slot_tracker_requests_total{route=\"/add\",status=\"409\"} 1",
                "kvindexer_slot_tracker_errors_total{route=\"/add\",status=\"409\"} 1",
                "kvindexer_slot_tracker_errors_total{route=\"other\",status=\"404\"} 1",
                "# TYPE kvindexer_slot_tracker_active_requests gauge",
                "kvindexer_slot_tracker_active_requests 1",
                "kvindexer_slot_tracker_tracked_workers 1",
                "kvindexer_slot_tracker_expired_requests_total 0")) {
            assertTrue(metrics.lines().anyMatch(line::equals), line + " in\n" + metrics);
        }
        assertTrue(
                metrics.lines().noneMatch(l -> l.startsWith("kvindexer_slot_tracker_errors_total{route=\"/register\"")),
                "a success is no error");
        assertTrue(metrics.lines().anyMatch(l -> l.equals("# TYPE jvm_memory_used_bytes gauge")), "JVM meters too");
        assertTrue(metrics.lines().anyMatch(l -> l.startsWith("vertx_pool_in_use{")), "and Vert.x's");
    }

    @Test
    void theCleanupDropsRequestsPastTheirTtl() throws Exception {
        start(300, 50);
        http.post("/register", REGISTER);
        assertAnswer(201, OK, http.post("/add", ADD));
        Await.until(
                "the request expired",
                Duration.ofSeconds(10),
                () -> http.get("/metrics").body().contains("kvindexer_slot_tracker_active_requests 0"));
        assertTrue(http.get("/metrics").body().contains("kvindexer_slot_tracker_expired_requests_total 1"));
        assertTrue(http.get("/loads")
                .body()
                .contains("\"dp_rank\":0,\"active_prefill_tokens\":0,\"active_decode_blocks\":0"));
        assertError(404, "Request req-123 not found", http.post("/prefill_complete", REQ));
        assertAnswer(201, OK, http.post("/add", ADD), "the id is free again");
    }

    /** {@code serve --slot-tracker-port}: the tracker runs in the indexer's process, on its own port. */
    @Test
    void runsBesideTheIndexerInOneProcess() throws Exception {
        IndexerNode node = IndexerNode.start(ServeConfig.local(0));
        try {
            SlotTrackerVerticle tracker = SlotTrackerCommand.deploy(
                    node.vertx(), SlotTrackerConfig.on("127.0.0.1", 0), node.meters()::micrometerScrape);
            HttpJson trackerHttp = new HttpJson(tracker.actualPort());
            assertAnswer(201, OK, trackerHttp.post("/register", REGISTER));
            assertEquals(200, new HttpJson(node.httpPort()).get("/workers").statusCode());
            assertError(404, "route not found", trackerHttp.get("/dump"));
            assertTrue(
                    trackerHttp.get("/metrics").body().contains("\nvertx_pool_in_use{"), "the process's Vert.x meters");
        } finally {
            node.close();
        }
    }

    private static void assertAnswer(int status, String body, HttpResponse<String> r, String message) {
        assertEquals(status, r.statusCode(), message + ": " + r.body());
        assertEquals(body, r.body(), message);
    }
}
