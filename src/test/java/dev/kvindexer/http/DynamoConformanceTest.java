package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.ClientCompat;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.Pack;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the newest Dynamo router asks of a remote indexer (docs/api/dynamo.md#post-query_tiered_by_hash, conformance rows D1a–D1c), against a running
 * node fed over real ZMQ: the T7 setup of docs/protocol/index.md#test-vectors with the blocks' real local hashes.
 */
class DynamoConformanceTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    private TestPublisher w7;
    private TestPublisher w8;

    @BeforeEach
    void start() {
        w7 = new TestPublisher();
        w8 = new TestPublisher();
    }

    @AfterEach
    void stop() {
        w7.close();
        w8.close();
    }

    private void register(long instance, TestPublisher pub) {
        indexer.register(instance, 0, pub, "test-model", 4);
    }

    @Test
    void d1TheRemoteIndexersTieredLookup() {
        register(7, w7);
        register(8, w8);
        int[] tokens = IntStream.rangeClosed(1, 12).toArray();
        EngineEvent device =
                new EngineEvent.Store(new long[] {101, 102}, null, Arrays.copyOf(tokens, 8), 4, "GPU", null);
        w7.publish(
                "",
                0,
                LocalNode.vllmBatch(
                        device,
                        new EngineEvent.Store(
                                new long[] {103}, 102L, Arrays.copyOfRange(tokens, 8, 12), 4, "CPU", null)));
        w8.publish("", 0, LocalNode.vllmBatch(device));
        long[] local = BlockHasher.localHashes(tokens, 4, BlockHasher.BASE_SEED);
        JsonObject query = new JsonObject()
                .put("block_hashes", new JsonArray(Arrays.stream(local).boxed().toList()))
                .put("model_name", "test-model")
                .put("routing_group", "default");
        String expected = "{\"block_size\":4,\"tiered\":{\"device\":{\"scores\":[[{\"worker_id\":7,\"dp_rank\":0},2],"
                + "[{\"worker_id\":8,\"dp_rank\":0},2]],\"frequencies\":[]},\"lower_tier\":[[\"host_pinned\",{\"hits\":"
                + "[[{\"worker_id\":7,\"dp_rank\":0},1],[{\"worker_id\":8,\"dp_rank\":0},0]]}]]}}";
        Await.equal(
                "D1a: the body of docs/api/dynamo.md#post-query_tiered_by_hash",
                WAIT,
                expected,
                () -> indexer.http()
                        .post("/query_tiered_by_hash", query.encode())
                        .body());
        HttpResponse<String> salted = indexer.http()
                .post(
                        "/query_tiered_by_hash",
                        query.copy().put("cache_salt", "s").encode());
        assertEquals(200, salted.statusCode(), "D1c: cache_salt is ignored here");
        assertEquals(expected, salted.body());
        JsonObject tenantOnly = query.copy().put("tenant_id", "other");
        tenantOnly.remove("routing_group");
        assertEquals(
                expected,
                indexer.http()
                        .post("/query_tiered_by_hash", tenantOnly.encode())
                        .body(),
                "no routing_group: the default group; tenant_id is ignored");
        assertEquals(
                422,
                indexer.http()
                        .post(
                                "/query_tiered_by_hash",
                                query.copy().putNull("routing_group").encode())
                        .statusCode(),
                "a routing_group sent as null is no string");

        HttpResponse<String> unknown = indexer.http()
                .post(
                        "/query_tiered_by_hash",
                        query.copy().put("model_name", "x").encode());
        assertEquals(404, unknown.statusCode());
        assertEquals("{\"error\":\"no indexer for model=x routing_group=default\"}", unknown.body(), "D1b");
        HttpResponse<String> tooLarge = indexer.http()
                .post(
                        "/query_tiered_by_hash",
                        "{\"block_hashes\":[9223372036854775808]," + "\"model_name\":\"test-model\"}");
        assertEquals(422, tooLarge.statusCode(), "block hashes are i64: " + tooLarge.body());
        assertEquals(
                415,
                indexer.http()
                        .post("/query_tiered_by_hash", query.encode(), "text/plain")
                        .statusCode());
    }

    @Test
    void d2d3EndpointsAreCheckedAsDynamoChecksThem() {
        String base = "{\"instance_id\":1,\"endpoint\":\"tcp://::1:5557\",\"model_name\":\"m\",\"block_size\":16}";
        HttpResponse<String> d2 = indexer.http().post("/register", base);
        assertEquals(400, d2.statusCode());
        assertEquals("{\"error\":\"invalid ZMQ endpoint `tcp://::1:5557`: missing TCP port\"}", d2.body());
        HttpResponse<String> d3 = indexer.http()
                .post(
                        "/register",
                        base.replace("tcp://::1:5557", "tcp://127.0.0.1:1")
                                .replace("}", ",\"replay_endpoint\":\"udp://h:1\"}"));
        assertEquals(400, d3.statusCode());
        assertEquals(
                "{\"error\":\"invalid replay endpoint `udp://h:1`: invalid ZMQ endpoint `udp://h:1`: "
                        + "unsupported scheme `udp`\"}",
                d3.body());
        assertEquals("[]", indexer.http().get("/workers").body(), "refused registrations change nothing");
    }

    @Test
    void d5QueryByHashIsStrict() {
        register(7, w7);
        w7.publish(
                "",
                0,
                LocalNode.vllmBatch(
                        new EngineEvent.Store(new long[] {1}, null, new int[] {5, 6, 7, 8}, 4, "GPU", null)));
        long local = BlockHasher.localHashes(new int[] {5, 6, 7, 8}, 4, BlockHasher.BASE_SEED)[0];
        JsonObject query = new JsonObject()
                .put("block_hashes", new JsonArray(List.of(local)))
                .put("model_name", "test-model");
        Await.equal(
                "the block",
                WAIT,
                "{\"7\":{\"0\":4}}",
                () -> String.valueOf(new JsonObject(indexer.http()
                                .post("/query_by_hash", query.encode())
                                .body())
                        .getValue("scores")));

        String refused = "{\"error\":\"cache_salt is not accepted by /query_by_hash; block_hashes must already include "
                + "the intended cache salt\"}";
        HttpResponse<String> d5a = indexer.http()
                .post("/query_by_hash", query.copy().put("cache_salt", "").encode());
        assertEquals(400, d5a.statusCode(), "D5a");
        assertEquals(refused, d5a.body());
        HttpResponse<String> unknownSalted = indexer.http()
                .post(
                        "/query_by_hash",
                        query.copy()
                                .put("model_name", "nobody")
                                .put("cache_salt", "s")
                                .encode());
        assertEquals(400, unknownSalted.statusCode(), "the salt is refused before the partition is looked up");
        assertEquals(
                200,
                indexer.http()
                        .post(
                                "/query_by_hash",
                                query.copy().putNull("cache_salt").encode())
                        .statusCode(),
                "a null cache_salt is absent");
        assertEquals(
                422,
                indexer.http()
                        .post(
                                "/query_by_hash",
                                query.copy().put("cache_salt", 5).encode())
                        .statusCode());

        HttpResponse<String> d5b = indexer.http()
                .post(
                        "/query_by_hash",
                        "{\"block_hashes\":[9223372036854775808],\"model_name\":\"test-model\",\"cache_salt\":\"s\"}");
        assertEquals(422, d5b.statusCode(), "D5b, even with a salt");
        assertEquals(
                "{\"error\":\"Failed to deserialize the JSON body into the target type: block_hashes[0]: invalid "
                        + "value: integer `9223372036854775808`, expected i64 (a hash above 9223372036854775807 is "
                        + "sent as its signed 64-bit value: -9223372036854775808)\"}",
                d5b.body());
        assertEquals(
                422,
                indexer.http()
                        .post("/query_by_hash", "{\"block_hashes\":[1.5],\"model_name\":\"test-model\"}")
                        .statusCode());
        assertEquals(
                422,
                indexer.http()
                        .post("/query_by_hash", "{\"block_hashes\":[\"1\"],\"model_name\":\"test-model\"}")
                        .statusCode());
        assertEquals(
                422,
                indexer.http()
                        .post(
                                "/query_by_hash",
                                query.copy().putNull("tenant_id").encode())
                        .statusCode(),
                "D5c");
        assertEquals(
                422,
                indexer.http()
                        .post(
                                "/query_by_hash",
                                query.copy().putNull("routing_group").encode())
                        .statusCode());
        assertEquals(
                422,
                indexer.http()
                        .post("/query", "{\"model_name\":\"test-model\",\"token_ids\":[1],\"tenant_id\":null}")
                        .statusCode(),
                "the same null rule on /query");
        assertEquals(
                200,
                indexer.http()
                        .post(
                                "/query_by_hash",
                                query.copy().put("tenant_id", "customer-a").encode())
                        .statusCode(),
                "tenant_id is read as a string and ignored");
    }

    @Test
    void d6GroupsAreRoutingGroupsAndTenantIdIsIgnored() {
        HttpResponse<String> r = indexer.http()
                .post(
                        "/register",
                        new JsonObject()
                                .put("instance_id", 7)
                                .put("endpoint", w7.endpoint())
                                .put("model_name", "test-model")
                                .put("block_size", 4)
                                .put("tenant_id", "customer-a")
                                .encode());
        assertEquals(201, r.statusCode(), r.body());
        JsonArray workers = new JsonArray(indexer.http().get("/workers").body());
        assertEquals(
                List.of(
                        "instance_id",
                        "source",
                        "status",
                        "model_name",
                        "routing_group",
                        "block_size",
                        "endpoints",
                        "listeners"),
                List.copyOf(workers.getJsonObject(0).fieldNames()),
                "D6a: no tenant_id member");
        assertEquals("default", workers.getJsonObject(0).getString("routing_group"));
        assertEquals(
                new JsonObject()
                        .put(
                                "test-model:default",
                                new JsonObject()
                                        .put("block_size", 4)
                                        .put("events", new JsonArray())
                                        .put("ref_counts", new JsonArray())
                                        .put("watermarks", new JsonArray())),
                new JsonObject(indexer.http().get("/dump").body()));
        HttpResponse<String> query = indexer.http()
                .post(
                        "/query",
                        "{\"model_name\":\"test-model\",\"tenant_id\":\"customer-a\"," + "\"token_ids\":[1,2,3,4]}");
        assertEquals(200, query.statusCode(), "a tenant_id query reads the default group: " + query.body());

        assertEquals(
                201,
                indexer.http()
                        .post(
                                "/register",
                                "{\"instance_id\":20,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":"
                                        + "\"llama3\",\"routing_group\":\"acme\",\"block_size\":4}")
                        .statusCode());
        assertEquals(
                201,
                indexer.http()
                        .post(
                                "/register",
                                "{\"instance_id\":20,\"dp_rank\":1,\"endpoint\":\"tcp://127.0.0.1:2\","
                                        + "\"model_name\":\"llama3\",\"routing_group\":\"acme\",\"block_size\":4}")
                        .statusCode());
        assertEquals(
                2,
                new JsonArray(indexer.http().get("/workers?tenant_id=acme").body()).size(),
                "D6b: the filter is ignored");
        assertEquals(
                1,
                new JsonArray(indexer.http().get("/workers?routing_group=acme").body()).size());

        assertEquals(
                200,
                indexer.http()
                        .post("/unregister", "{\"instance_id\":20,\"model_name\":\"llama3\",\"dp_rank\":1}")
                        .statusCode());
        assertEquals(
                "[]",
                indexer.http().get("/workers?model_name=llama3").body(),
                "without routing_group the instance goes wherever it is registered, every rank");
        assertEquals(
                200,
                indexer.http()
                        .post(
                                "/unregister",
                                "{\"instance_id\":7,\"model_name\":\"test-model\","
                                        + "\"routing_group\":null,\"tenant_id\":null}")
                        .statusCode(),
                "null means absent in /unregister");
        assertEquals("[]", indexer.http().get("/workers").body());
    }

    @Test
    void d8AnOpaqueMultimodalIdentifierEntersTheBlockHash() {
        register(7, w7);
        Map<String, Object> stored = new LinkedHashMap<>();
        stored.put("type", "BlockStored");
        stored.put("block_hashes", List.of(1));
        stored.put("parent_block_hash", null);
        stored.put("token_ids", List.of(151655, 151655, 151655, 151655));
        stored.put("block_size", 4);
        stored.put("lora_id", null);
        stored.put("medium", "GPU");
        stored.put("lora_name", null);
        stored.put("extra_keys", List.of(List.of(List.of("opaque-renderer-image-0", -3))));
        w7.publish("", 0, Pack.batch(0, stored));
        Await.equal(
                "D8: MB1 matches",
                WAIT,
                "{\"7\":{\"0\":4}}",
                () -> String.valueOf(new JsonObject(indexer.http()
                                .post(
                                        "/query_by_hash",
                                        "{\"block_hashes\":[-2187067617909832755],\"model_name\":\"test-model\"}")
                                .body())
                        .getValue("scores")));
        assertEquals(
                "{}",
                String.valueOf(new JsonObject(indexer.http()
                                .post(
                                        "/query_by_hash",
                                        "{\"block_hashes\":[3745411083916171343],\"model_name\":\"test-model\"}")
                                .body())
                        .getValue("scores")),
                "the same tokens without the image (MB0) do not match");
    }

    @Test
    void theOlderTenantRuleOnlyWhenAskedFor() throws Exception {
        try (IndexerNode older = IndexerNode.start(ServeConfig.local(0).withCompat(new ClientCompat(true, false)))) {
            HttpJson http = new HttpJson(older.httpPort());
            assertEquals(
                    201,
                    http.post(
                                    "/register",
                                    "{\"instance_id\":20,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":"
                                            + "\"llama3\",\"tenant_id\":\"acme\",\"block_size\":4}")
                            .statusCode());
            assertEquals(
                    201,
                    http.post(
                                    "/register",
                                    "{\"instance_id\":21,\"endpoint\":\"tcp://127.0.0.1:2\",\"model_name\":"
                                            + "\"mistral\",\"block_size\":8}")
                            .statusCode());
            JsonArray acme = new JsonArray(http.get("/workers?tenant_id=acme").body());
            assertEquals(1, acme.size(), "tenant_id filters");
            assertEquals("acme", acme.getJsonObject(0).getString("routing_group"));
            assertEquals("acme", acme.getJsonObject(0).getString("tenant_id"), "and is echoed");
            assertEquals(
                    200,
                    http.post("/query", "{\"model_name\":\"llama3\",\"tenant_id\":\"acme\",\"token_ids\":[1]}")
                            .statusCode());
            assertEquals(
                    404,
                    http.post("/unregister", "{\"instance_id\":20,\"model_name\":\"llama3\",\"dp_rank\":3}")
                            .statusCode(),
                    "the per-rank unregister without a group");
        }
    }

    @Test
    void aPartitionWithNoLowerTierAnswersAnEmptyList() {
        register(7, w7);
        w7.publish(
                "",
                0,
                LocalNode.vllmBatch(
                        new EngineEvent.Store(new long[] {1}, null, new int[] {5, 6, 7, 8}, 4, "GPU", null)));
        long[] local = BlockHasher.localHashes(new int[] {5, 6, 7, 8}, 4, BlockHasher.BASE_SEED);
        String body = new JsonObject()
                .put("block_hashes", new JsonArray(List.of(local[0])))
                .put("model_name", "test-model")
                .encode();
        Await.equal(
                "a device-only partition",
                WAIT,
                "{\"block_size\":4,\"tiered\":{\"device\":{\"scores\":"
                        + "[[{\"worker_id\":7,\"dp_rank\":0},1]],\"frequencies\":[]},\"lower_tier\":[]}}",
                () -> indexer.http().post("/query_tiered_by_hash", body).body());
    }
}
