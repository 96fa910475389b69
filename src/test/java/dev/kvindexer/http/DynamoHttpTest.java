package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.LocalNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Dynamo-flavor HTTP contract (docs/api/dynamo.md) against a real server on loopback. */
class DynamoHttpTest {
    @RegisterExtension
    static final LocalNode indexer = new LocalNode();

    private static String register(long id, int dp, String model, String routingGroup, int bs) {
        return "{\"instance_id\":" + Long.toUnsignedString(id) + ",\"dp_rank\":" + dp
                + ",\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"" + model + "\",\"routing_group\":\""
                + routingGroup
                + "\",\"block_size\":" + bs + "}";
    }

    private static void assertError(HttpResponse<String> r, int status, String messageFragment) {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("application/json"));
        String error = new JsonObject(r.body()).getString("error");
        assertTrue(error != null && error.contains(messageFragment), "error was: " + r.body());
    }

    @Test
    void healthIsEmpty200() {
        HttpResponse<String> r = indexer.http().get("/health");
        assertEquals(200, r.statusCode());
        assertEquals("", r.body());
    }

    @Test
    void frameworkLevelRejectionsKeepTheReferenceCodesWithJsonBodies() {
        assertError(indexer.http().post("/query", "{}", null), 415, "Content-Type");
        assertError(indexer.http().post("/register", "{}", "text/plain"), 415, "Content-Type");
        assertError(indexer.http().post("/query", "{\"token_ids\": [1,", "application/json"), 400, "Failed to parse");
        assertError(indexer.http().post("/query", "", "application/json"), 400, "Failed to parse");
        assertError(indexer.http().post("/query", "[1,2]"), 422, "expected a JSON object");
        assertError(indexer.http().post("/query", "{\"model_name\":\"m\"}"), 422, "missing field `token_ids`");
        assertError(indexer.http().post("/query", "{\"model_name\":\"m\",\"token_ids\":\"x\"}"), 422, "`token_ids`");
        assertError(
                indexer.http().post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,4294967296]}"),
                422,
                "`token_ids[1]`");
        assertError(indexer.http().post("/query", "{\"model_name\":\"m\",\"token_ids\":[-1]}"), 422, "`token_ids[0]`");
        assertError(indexer.http().post("/query", "{\"model_name\":\"m\",\"token_ids\":[1.5]}"), 422, "`token_ids[0]`");
        assertError(indexer.http().post("/query", "{\"model_name\":7,\"token_ids\":[1]}"), 422, "`model_name`");
        // As the reference reads it: the partition first, the salts only for a model it serves.
        assertError(
                indexer.http().post("/query", "{\"model_name\":\"nobody\",\"token_ids\":[1],\"lora_name\":5}"),
                404,
                "no indexer for model=nobody");
        assertError(
                indexer.http().post("/query_by_hash", "{\"model_name\":\"m\",\"block_hashes\":[18446744073709551616]}"),
                422,
                "block_hashes[0]: invalid value: integer `18446744073709551616`, expected i64");
        // A u64 hash above 2^63 - 1 (as engines print them) is told the signed value the route reads.
        assertError(
                indexer.http().post("/query_by_hash", "{\"model_name\":\"m\",\"block_hashes\":[18446744073709551615]}"),
                422,
                "sent as its signed 64-bit value: -1");
        assertError(
                indexer.http()
                        .post(
                                "/register",
                                register(1, 0, "m", "t", 4).replace("\"instance_id\":1", "\"instance_id\":-1")),
                422,
                "`instance_id`");
        assertError(
                indexer.http().post("/register", "{\"endpoint\":\"tcp://h:1\",\"model_name\":\"m\",\"block_size\":4}"),
                422,
                "missing field `instance_id`");
    }

    @Test
    void bodyLimitsAre2MiBAnd8MiBForQuery() {
        String pad = " ".repeat(3 * 1024 * 1024);
        assertError(indexer.http().post("/register", "{" + pad + "}"), 413, "limit");
        // 3 MiB is fine for /query: the answer is about the unknown model, not the size.
        assertError(
                indexer.http().post("/query", "{\"model_name\":\"nobody\",\"token_ids\":[]" + pad + "}"),
                404,
                "no indexer");
        assertError(indexer.http().post("/query", "{" + " ".repeat(9 * 1024 * 1024) + "}"), 413, "limit");
    }

    @Test
    void unknownRouteAndWrongMethodAreJsonErrors() {
        assertError(indexer.http().get("/no-such-route"), 404, "no route");
        assertError(indexer.http().send("DELETE", "/query"), 405, "not allowed");
        assertError(indexer.http().get("/register"), 405, "not allowed");
    }

    @Test
    void registerValidatesEndpointsAndBlockSize() {
        assertError(
                indexer.http()
                        .post("/register", register(1, 0, "v", "t", 4).replace("tcp://127.0.0.1:1", "tcp://host")),
                400,
                "invalid ZMQ endpoint `tcp://host`: missing TCP port");
        assertError(
                indexer.http()
                        .post(
                                "/register",
                                register(1, 0, "v", "t", 4).replace("}", ",\"replay_endpoint\":\"udp://h:1\"}")),
                400,
                "invalid replay endpoint `udp://h:1`: invalid ZMQ endpoint `udp://h:1`: unsupported scheme `udp`");
        assertError(indexer.http().post("/register", register(1, 0, "v", "t", 0)), 400, "block_size must be positive");
        assertEquals("[]", indexer.http().get("/workers?model_name=v").body(), "rejected registrations change nothing");
    }

    @Test
    void registrationLifecycleWithWorkersQueryAndDump() {
        assertEquals(
                201,
                indexer.http()
                        .post("/register", register(21, 0, "mistral", "other", 8))
                        .statusCode());
        HttpResponse<String> created = indexer.http().post("/register", register(20, 0, "llama3", "acme", 4));
        assertEquals(201, created.statusCode());
        assertEquals("{\"status\":\"ok\"}", created.body());
        assertEquals(
                201,
                indexer.http()
                        .post("/register", register(20, 1, "llama3", "acme", 4))
                        .statusCode());

        assertError(
                indexer.http().post("/register", register(20, 1, "llama3", "acme", 4)),
                409,
                "instance 20 dp_rank 1 already registered");
        assertError(
                indexer.http().post("/register", register(20, 2, "mistral", "other", 8)),
                409,
                "instance 20 is already registered for model=llama3 routing_group=acme");
        assertError(
                indexer.http().post("/register", register(22, 0, "llama3", "acme", 16)),
                409,
                "block_size mismatch for model=llama3 routing_group=acme: existing=4, requested=16");

        JsonArray acme =
                new JsonArray(indexer.http().get("/workers?routing_group=acme").body());
        assertEquals(1, acme.size());
        JsonObject w = acme.getJsonObject(0);
        assertEquals(20L, w.getLong("instance_id"));
        assertEquals("zmq", w.getString("source"));
        assertEquals("llama3", w.getString("model_name"));
        assertEquals(4, w.getInteger("block_size"));
        assertEquals("tcp://127.0.0.1:1", w.getJsonObject("endpoints").getString("1"));
        assertTrue(w.getJsonObject("listeners").containsKey("0"));
        assertFalse(w.containsKey("tenant_id"), "the group is routing_group alone");
        assertEquals(
                2, new JsonArray(indexer.http().get("/workers?tenant_id=acme").body()).size(), "tenant_id is ignored");
        assertEquals(
                1,
                new JsonArray(indexer.http().get("/workers?model_name=mistral").body()).size());
        assertEquals("[]", indexer.http().get("/workers?model_name=nonexistent").body());

        HttpResponse<String> shortPrompt = indexer.http()
                .post("/query", "{\"model_name\":\"llama3\",\"routing_group\":\"acme\",\"token_ids\":[1,2,3]}");
        assertEquals(200, shortPrompt.statusCode());
        assertEquals("{\"scores\":{},\"frequencies\":[],\"instances\":{}}", shortPrompt.body());
        assertError(
                indexer.http().post("/query", "{\"model_name\":\"llama3\",\"token_ids\":[1,2,3,4]}"),
                404,
                "no indexer for model=llama3 routing_group=default");

        JsonObject dump = new JsonObject(indexer.http().get("/dump").body());
        // Dynamo's two members, then our exact-snapshot extensions (docs/protocol/recovery.md#recovery-algorithm),
        // which Dynamo ignores.
        assertEquals(
                new JsonObject("{\"block_size\":4,\"events\":[],\"ref_counts\":[],\"watermarks\":[]}"),
                dump.getJsonObject("llama3:acme"));
        assertEquals(8, dump.getJsonObject("mistral:other").getInteger("block_size"));

        assertError(
                indexer.http().post("/unregister", "{\"instance_id\":20,\"model_name\":\"mistral\"}"),
                404,
                "instance 20 is registered for model=llama3 routing_group=acme");
        assertError(
                indexer.http().post("/unregister", "{\"instance_id\":99,\"model_name\":\"llama3\"}"),
                404,
                "instance 99 not found");
        assertError(
                indexer.http()
                        .post(
                                "/unregister",
                                "{\"instance_id\":20,\"model_name\":\"llama3\",\"routing_group\":\"acme\",\"dp_rank\":7}"),
                404,
                "instance 20 dp_rank 7 not found");
        assertEquals(
                200,
                indexer.http()
                        .post(
                                "/unregister",
                                "{\"instance_id\":20,\"model_name\":\"llama3\",\"routing_group\":\"acme\",\"dp_rank\":1}")
                        .statusCode());
        assertEquals(
                1,
                new JsonArray(indexer.http().get("/workers?model_name=llama3").body())
                        .getJsonObject(0)
                        .getJsonObject("listeners")
                        .size());
        assertEquals(
                200,
                indexer.http()
                        .post(
                                "/unregister",
                                "{\"instance_id\":20,\"model_name\":\"llama3\",\"routing_group\":\"acme\"}")
                        .statusCode());
        assertError(
                indexer.http()
                        .post(
                                "/query",
                                "{\"model_name\":\"llama3\",\"routing_group\":\"acme\",\"token_ids\":[1,2,3,4]}"),
                404,
                "no indexer for model=llama3 routing_group=acme");
        assertEquals(
                200,
                indexer.http()
                        .post("/unregister", "{\"instance_id\":21,\"model_name\":\"mistral\"}")
                        .statusCode());
        assertEquals("{}", indexer.http().get("/dump").body());
    }

    @Test
    void peersAreAnExactStringSet() {
        assertEquals(
                201,
                indexer.http()
                        .post("/register_peer", "{\"url\":\"http://peer:8091\"}")
                        .statusCode());
        assertEquals(
                201,
                indexer.http()
                        .post("/register_peer", "{\"url\":\"http://peer:8091\"}")
                        .statusCode());
        assertEquals("[\"http://peer:8091\"]", indexer.http().get("/peers").body());
        assertError(indexer.http().post("/deregister_peer", "{\"url\":\"http://peer:8091/\"}"), 404, "peer not found");
        assertEquals(
                200,
                indexer.http()
                        .post("/deregister_peer", "{\"url\":\"http://peer:8091\"}")
                        .statusCode());
        assertEquals("[]", indexer.http().get("/peers").body());
        assertError(indexer.http().post("/register_peer", "{}"), 422, "missing field `url`");
    }

    /** Any client may register a peer, so the list is bounded: a full list and an overlong URL change nothing. */
    @Test
    void thePeerListIsBounded() {
        String tooLong = "http://" + "p".repeat(dev.kvindexer.cluster.PeerSet.MAX_URL_CHARS);
        assertError(
                indexer.http().post("/register_peer", "{\"url\":\"" + tooLong + "\"}"),
                422,
                "`url` is longer than 2048 characters");
        try {
            for (int i = 0; i < dev.kvindexer.cluster.PeerSet.MAX_PEERS; i++) {
                assertEquals(
                        201,
                        indexer.http()
                                .post("/register_peer", "{\"url\":\"http://peer-" + i + ":8091\"}")
                                .statusCode());
            }
            assertError(
                    indexer.http().post("/register_peer", "{\"url\":\"http://one-more:8091\"}"),
                    409,
                    "peer list is full: 1024 peers are registered");
            assertEquals(
                    201,
                    indexer.http()
                            .post("/register_peer", "{\"url\":\"http://peer-7:8091\"}")
                            .statusCode(),
                    "registering a listed peer again is still fine");
            assertEquals(
                    dev.kvindexer.cluster.PeerSet.MAX_PEERS,
                    new io.vertx.core.json.JsonArray(
                                    indexer.http().get("/peers").body())
                            .size());
        } finally {
            for (int i = 0; i < dev.kvindexer.cluster.PeerSet.MAX_PEERS; i++) {
                indexer.http().post("/deregister_peer", "{\"url\":\"http://peer-" + i + ":8091\"}");
            }
        }
    }
}
