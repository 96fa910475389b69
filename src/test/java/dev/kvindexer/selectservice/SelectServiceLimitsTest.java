package dev.kvindexer.selectservice;

import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.SelectServiceLimitsConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.load.LoadEvent;
import dev.kvindexer.selectservice.replication.ReplicaEventCodec;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * What one request or replica peer may make the selection service hold: rank ranges, blocks per booking and in
 * total, and who may change the catalog. Each refusal is a 4xx that changes nothing.
 */
class SelectServiceLimitsTest {
    private static final Map<String, String> EVENTS_OFF = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");
    private static final String WORKER =
            "{\"worker_id\":1,\"model_name\":\"model\",\"endpoint\":\"http://w:8000\"," + "\"block_size\":4";

    private SelectServiceFixture f;

    @AfterEach
    void stop() {
        if (f != null) {
            f.close();
        }
    }

    private static String tokens(int blocks, int base) {
        return IntStream.range(0, blocks * 4)
                .mapToObj(i -> Integer.toString(base + i))
                .collect(Collectors.joining(","));
    }

    @Test
    void aHugeRankCountIsRefusedBeforeAnythingIsBuilt() throws Exception {
        f = SelectServiceFixture.start(EVENTS_OFF);
        // One reason string per rank for 2^32 ranks would exhaust any heap.
        assertError(422, "--max-worker-ranks", f.http.post("/workers", WORKER + ",\"data_parallel_size\":4294967295}"));
        assertError(422, "--max-worker-ranks", f.http.post("/workers", WORKER + ",\"data_parallel_size\":4097}"));
        assertEquals("[]", f.http.get("/workers").body());
        assertEquals(
                201,
                f.http.post("/workers", WORKER + ",\"data_parallel_size\":2}").statusCode());
        assertError(422, "--max-worker-ranks", f.http.patch("/workers/1", "{\"data_parallel_size\":4294967295}"));
        assertEquals(
                2L,
                new JsonArray(f.http.get("/workers").body()).getJsonObject(0).getLong("data_parallel_size"));
    }

    /**
     * Every rank is checked before any listener is created: a worker whose third rank conflicts with a registration
     * the indexer already has creates nothing, and the existing registration stays.
     */
    @Test
    void aConflictOnOneRankCreatesNothing() throws Exception {
        f = SelectServiceFixture.start(Map.of());
        HttpJson indexer = new HttpJson(f.node.httpPort());
        assertEquals(
                201,
                indexer.post(
                                "/register",
                                "{\"instance_id\":7,\"dp_rank\":2,\"endpoint\":"
                                        + "\"tcp://127.0.0.1:9\",\"model_name\":\"model\",\"block_size\":4}")
                        .statusCode());
        String worker = "{\"worker_id\":7,\"model_name\":\"model\",\"endpoint\":\"http://w:8000\",\"block_size\":4,"
                + "\"data_parallel_size\":3,\"kv_events_endpoints\":{\"0\":\"tcp://127.0.0.1:10\","
                + "\"1\":\"tcp://127.0.0.1:11\",\"2\":\"tcp://127.0.0.1:12\"}}";
        JsonObject record = new JsonObject(f.http.post("/workers", worker).body());
        assertEquals("incomplete", record.getString("lifecycle"), record.encode());
        assertTrue(record.getJsonArray("not_schedulable_reasons").getString(0).contains("dp_rank 2"), record.encode());
        JsonObject listeners =
                new JsonArray(indexer.get("/workers").body()).getJsonObject(0).getJsonObject("listeners");
        assertEquals(java.util.Set.of("2"), listeners.fieldNames(), "ranks 0 and 1 were never created: " + listeners);
        assertEquals("tcp://127.0.0.1:9", listeners.getJsonObject("2").getString("endpoint"));
    }

    /** A worker with more ranks than the node has room for listeners creates none of them. */
    @Test
    void aWorkerTheListenerCeilingCannotHoldCreatesNothing() throws Exception {
        f = SelectServiceFixture.start(
                Map.of(),
                SelectServiceConfig.on("127.0.0.1", 0),
                dev.kvindexer.config.ServeConfig.local(0).withMaxListeners(4));
        HttpJson indexer = new HttpJson(f.node.httpPort());
        JsonObject record = new JsonObject(f.http.post("/workers", ranks(1, 5)).body());
        assertEquals("incomplete", record.getString("lifecycle"), record.encode());
        String reason = record.getJsonArray("not_schedulable_reasons").getString(0);
        assertTrue(reason.contains("listener limit reached: 5 ranks need a listener each and 4 of 4 are free"), reason);
        assertEquals("[]", indexer.get("/workers").body(), "no rank was created");
        assertEquals(
                "schedulable",
                new JsonObject(f.http.post("/workers", ranks(2, 4)).body()).getString("lifecycle"));
        assertEquals(
                4,
                new JsonArray(indexer.get("/workers").body())
                        .getJsonObject(0)
                        .getJsonObject("listeners")
                        .size());
        // The indexer's own /register meets the same ceiling.
        assertError(
                429,
                "--max-listeners",
                indexer.post(
                        "/register",
                        "{\"instance_id\":9,\"endpoint\":"
                                + "\"tcp://127.0.0.1:9\",\"model_name\":\"model\",\"block_size\":4}"));
    }

    private static String ranks(long worker, int n) {
        JsonObject endpoints = new JsonObject();
        for (int r = 0; r < n; r++) {
            endpoints.put(Integer.toString(r), "tcp://127.0.0.1:" + (20 + r));
        }
        return new JsonObject()
                .put("worker_id", worker)
                .put("model_name", "model")
                .put("endpoint", "http://w")
                .put("block_size", 4)
                .put("data_parallel_size", n)
                .put("kv_events_endpoints", endpoints)
                .encode();
    }

    @Test
    void ranksPastTheIndexAreRefusedAndTheLastOneWorks() throws Exception {
        f = SelectServiceFixture.start(EVENTS_OFF);
        for (String start : new String[] {"4294967295", "2147483648", "65536"}) {
            assertError(
                    422,
                    "largest rank the index holds",
                    f.http.post("/workers", WORKER + ",\"data_parallel_start_rank\":" + start + "}"));
        }
        assertError(
                422,
                "largest rank the index holds",
                f.http.post("/workers", WORKER + ",\"data_parallel_start_rank\":65535,\"data_parallel_size\":2}"));
        assertEquals("[]", f.http.get("/workers").body());
        assertEquals(
                201,
                f.http.post("/workers", WORKER + ",\"data_parallel_start_rank\":65535}")
                        .statusCode());
        JsonObject chosen =
                new JsonObject(f.http.post("/select_and_reserve", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}")
                        .body());
        assertEquals(65535, chosen.getInteger("dp_rank"), chosen.encode());
        assertEquals("1/1/4", LoadStorm.reported(f.http).get("1/65535"));
    }

    @Test
    void bookingsAreBoundedOneByOneAndTogether() throws Exception {
        f = SelectServiceFixture.start(
                EVENTS_OFF, SelectServiceConfig.on("127.0.0.1", 0).withLimits(new SelectServiceLimitsConfig(8, 8, 16)));
        assertEquals(201, f.http.post("/workers", WORKER + "}").statusCode());
        assertError(
                422,
                "--max-booking-blocks",
                f.http.post("/select_and_reserve", "{\"model_name\":\"model\",\"token_ids\":[" + tokens(9, 0) + "]}"));
        assertError(
                422,
                "--max-booking-blocks",
                f.http.post(
                        "/reservations",
                        "{\"model_name\":\"model\"," + "\"selection_id\":\"x\",\"worker_id\":1,\"token_ids\":["
                                + tokens(9, 0) + "]}"));
        assertEquals(0, booked());
        assertEquals(
                200,
                f.http.post(
                                "/select_and_reserve",
                                "{\"model_name\":\"model\",\"selection_id\":\"a\"," + "\"token_ids\":[" + tokens(8, 0)
                                        + "]}")
                        .statusCode());
        assertEquals(
                200,
                f.http.post(
                                "/select_and_reserve",
                                "{\"model_name\":\"model\",\"selection_id\":\"b\"," + "\"token_ids\":[" + tokens(8, 100)
                                        + "]}")
                        .statusCode());
        assertEquals(16, booked());
        assertError(
                429,
                "--max-booked-blocks",
                f.http.post("/select_and_reserve", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}"));
        assertEquals(2, (int) MetricsPage.of(f.http).value("kvindexer_select_active_reservations"));
        assertEquals(200, f.http.send("DELETE", "/reservations/a").statusCode());
        assertEquals(8, booked());
        assertEquals(
                200,
                f.http.post("/select_and_reserve", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}")
                        .statusCode());
        assertEquals(9, booked());
    }

    private long booked() {
        return (long) MetricsPage.of(f.http).value("kvindexer_select_booked_blocks");
    }

    /** A replica peer's booking over a bound is dropped and counted; one within them is still applied. */
    @Test
    void aPeersOversizeBookingsAreDropped() throws Exception {
        f = SelectServiceFixture.start(
                EVENTS_OFF,
                new SelectServiceConfig(
                                "127.0.0.1",
                                0,
                                120_000,
                                4096,
                                268_435_456L,
                                10_000,
                                FreePort.any(),
                                java.util.List.of(),
                                null)
                        .withLimits(new SelectServiceLimitsConfig(8, 8, 12)));
        assertEquals(201, f.http.post("/workers", WORKER + "}").statusCode());
        PartitionKey p = new PartitionKey("model", "default");
        try (ZContext zmq = new ZContext(1)) {
            ZMQ.Socket peer = zmq.createSocket(SocketType.PUB);
            peer.setLinger(0);
            int port = FreePort.any();
            peer.bind("tcp://*:" + port);
            assertEquals(
                    201,
                    f.http.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:" + port + "\"}")
                            .statusCode());
            byte[] topic = ReplicaEventCodec.TOPIC.getBytes(StandardCharsets.UTF_8);
            byte[] huge = ReplicaEventCodec.encode(
                    new LoadEvent.Added(p, 4, "huge", 1, 0, null, new long[9], true, null, 4), 99);
            byte[] eight = ReplicaEventCodec.encode(
                    new LoadEvent.Added(p, 4, "eight", 1, 0, null, new long[] {1, 2, 3, 4, 5, 6, 7, 8}, true, null, 4),
                    99);
            byte[] five = ReplicaEventCodec.encode(
                    new LoadEvent.Added(p, 4, "five", 1, 0, null, new long[] {11, 12, 13, 14, 15}, true, null, 4), 99);
            Await.until("the booking within the bounds is applied", Duration.ofSeconds(30), () -> {
                send(peer, topic, huge);
                send(peer, topic, eight);
                return "1/8/4".equals(LoadStorm.reported(f.http).get("1/0"));
            });
            // Over the total: 8 held, 5 more would make 13 of 12.
            Await.until("the booking over the total is refused", Duration.ofSeconds(10), () -> {
                send(peer, topic, five);
                return MetricsPage.of(f.http).valueOrZero("kvindexer_select_replica_bookings_refused_total") >= 2;
            });
            assertEquals("1/8/4", LoadStorm.reported(f.http).get("1/0"));
            assertEquals(8, booked());
        }
    }

    private static void send(ZMQ.Socket socket, byte[]... frames) {
        for (int i = 0; i < frames.length; i++) {
            socket.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    @Test
    void withATokenTheCatalogNeedsItAndWithAuthAllEveryRouteDoes() throws Exception {
        f = SelectServiceFixture.start(
                EVENTS_OFF,
                SelectServiceConfig.on("127.0.0.1", 0).withSecurity(new SecurityConfig("secret", false, null, null)));
        HttpJson withToken = f.http.withHeader("authorization", "Bearer secret");
        assertError(401, "Bearer", f.http.post("/workers", WORKER + "}"));
        assertError(
                401,
                "invalid bearer token",
                f.http.withHeader("authorization", "Bearer guess").post("/workers", WORKER + "}"));
        assertEquals("[]", f.http.get("/workers").body());
        assertError(401, "Bearer", f.http.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:1\"}"));
        assertEquals(201, withToken.post("/workers", WORKER + "}").statusCode());
        assertError(401, "Bearer", f.http.patch("/workers/1", "{\"endpoint\":\"http://other:1\"}"));
        assertError(401, "Bearer", f.http.send("DELETE", "/workers/1"));
        assertEquals(
                200,
                f.http.post("/select", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}")
                        .statusCode());
        assertEquals(200, f.http.get("/dump").statusCode());
        f.close();

        f = SelectServiceFixture.start(
                EVENTS_OFF,
                SelectServiceConfig.on("127.0.0.1", 0).withSecurity(new SecurityConfig("secret", true, null, null)));
        withToken = f.http.withHeader("authorization", "Bearer secret");
        for (String path : new String[] {"/dump", "/workers", "/loads", "/metrics", "/ready", "/health"}) {
            assertError(401, "Bearer", f.http.get(path));
        }
        assertError(401, "Bearer", f.http.post("/select", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}"));
        assertEquals(201, withToken.post("/workers", WORKER + "}").statusCode());
        assertEquals(200, withToken.get("/dump").statusCode());
        assertEquals(
                200,
                withToken
                        .post("/select", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4]}")
                        .statusCode());
    }
}
