package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A gateway of the Mooncake JSON flavor and a Dynamo router using one running node (docs/api/mooncake-json.md): the body picks the
 * flavor, both see the same partitions, and Mooncake gets its own field names, string ids, status texts and shapes.
 */
class MooncakeJsonHttpTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String PREFILL = "vllm-prefill-node1";
    private static final String DECODE = "vllm-decode-1";

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    private static JsonObject registration(String instance, TestPublisher pub, String lora) {
        return new JsonObject()
                .put("endpoint", pub.endpoint())
                .put("type", "vLLM")
                .put("modelname", "deepseek")
                .put("lora_name", lora)
                .put("tenant_id", "default")
                .put("instance_id", instance)
                .put("block_size", 4)
                .put("dp_rank", 0)
                .put("additionalsalt", "w8a8");
    }

    private static int[] tokens(int n) {
        return IntStream.range(0, n).toArray();
    }

    private static byte[] store(long[] hashes, int[] tokens, String lora) {
        return BatchEncoder.batch(
                BatchEncoder.Format.VLLM_MAP,
                1.0,
                List.of(new EngineEvent.Store(hashes, null, tokens, 4, "GPU", lora)),
                0);
    }

    private static JsonObject query(int n, String lora) {
        JsonObject q = new JsonObject()
                .put("model", "deepseek")
                .put("token_ids", new JsonArray(IntStream.range(0, n).boxed().toList()))
                .put("tenant_id", "default")
                .put("block_size", 4);
        return lora == null ? q : q.put("lora_name", lora);
    }

    private HttpResponse<String> post(String path, JsonObject body) {
        return indexer.http().post(path, body.encode());
    }

    private static void assertJson(String expected, HttpResponse<String> r) {
        assertEquals(new JsonObject(expected), new JsonObject(r.body()), r.body());
    }

    private void assertMooncakeError(HttpResponse<String> r, int status, String code, String field) {
        assertEquals(status, r.statusCode(), r.body());
        JsonObject e = new JsonObject(r.body());
        assertEquals(code, e.getString("error"), r.body());
        assertTrue(!e.getString("reason", "").isEmpty(), "a reason: " + r.body());
        assertEquals(field, e.getString("field"), r.body());
    }

    @Test
    void aGatewayConversationRegisterEventsQueryUnregister() {
        TestPublisher prefill = indexer.engine();
        TestPublisher decode = indexer.engine();
        HttpResponse<String> registered = post("/register", registration(PREFILL, prefill, null));
        assertEquals(200, registered.statusCode(), registered.body());
        assertEquals(
                "{\"status\":\"registered successfully\",\"instance_id\":\"vllm-prefill-node1\"}", registered.body());
        assertEquals(
                registered.body(),
                post("/register", registration(PREFILL, prefill, null)).body(),
                "registering the same thing again succeeds again");
        assertEquals(200, post("/register", registration(DECODE, decode, null)).statusCode());

        prefill.awaitSubscriber();
        prefill.publish("", 0, store(new long[] {11, 12, 13}, tokens(12), null));
        Await.until(
                "the store is indexed",
                WAIT,
                () -> post("/query", query(12, null)).body().contains("\"GPU\":12"));

        String both = "{\"default\":{"
                + "\"vllm-prefill-node1\":{\"longest_matched\":12,\"GPU\":12,\"DP\":{\"0\":12},\"CPU\":12,\"DISK\":12},"
                + "\"vllm-decode-1\":{\"longest_matched\":0,\"GPU\":0,\"DP\":{\"0\":0},\"CPU\":0,\"DISK\":0}}}";
        assertJson(both, post("/query", query(12, null)));
        assertJson(
                both.replace("{\"default\":", "{\"data\":"),
                indexer.http().post("/query?format=data", query(12, null).encode()));
        assertJson(
                both.replace("{\"default\":", "{\"data\":"),
                indexer.http()
                        .post("/query?flavor=mooncake-data", query(12, null).encode()));
        assertJson(
                "{\"instances\":{\"vllm-prefill-node1\":{\"longest_matched\":12,\"gpu\":12,\"dp\":{\"0\":12},\"cpu\":12,"
                        + "\"disk\":12,\"rank_matches\":{\"0\":{\"gpu\":12,\"cpu\":12,\"disk\":12}}}}}",
                indexer.http()
                        .post(
                                "/query?format=instances",
                                query(12, null).put("instance_id", PREFILL).encode()));
        assertJson(
                "{\"default\":{\"vllm-decode-1\":{\"longest_matched\":0,\"GPU\":0,\"DP\":{\"0\":0},\"CPU\":0,\"DISK\":0}}}",
                post("/query", query(12, null).put("instance_id", DECODE)));
        // The Go Conductor answers the instance asked for, all zeros, even when nobody registered it.
        assertJson(
                "{\"default\":{\"nobody\":{\"longest_matched\":0,\"GPU\":0,\"DP\":{},\"CPU\":0,\"DISK\":0}}}",
                post("/query", query(12, null).put("instance_id", "nobody")));

        // The Dynamo flavor sees the same partition (model_name = modelname, tenant_id = group) and the same numbers.
        String id = Long.toUnsignedString(InstanceIds.of(PREFILL));
        JsonObject dynamo = new JsonObject(indexer.http()
                .post(
                        "/query",
                        "{\"model_name\":\"deepseek\",\"token_ids\":"
                                + new JsonArray(IntStream.range(0, 12).boxed().toList()) + "}")
                .body());
        assertEquals(new JsonObject("{\"" + id + "\":{\"0\":12}}"), dynamo.getJsonObject("scores"));
        assertEquals(12, dynamo.getJsonObject("instances").getJsonObject(id).getInteger("longest_matched"));

        // The Go Conductor's {count, services}: capitalised members in its order, "" for what is absent.
        String services = indexer.http().get("/services").body();
        assertEquals(2, new JsonObject(services).getInteger("count"), services);
        assertEquals(2, new JsonObject(services).getJsonArray("services").size(), services);
        assertTrue(
                services.contains(
                        "{\"Endpoint\":\"" + prefill.endpoint() + "\",\"ReplayEndpoint\":\"\",\"Type\":\"vLLM\","
                                + "\"ModelName\":\"deepseek\",\"LoraName\":\"\",\"TenantID\":\"default\","
                                + "\"InstanceID\":\"" + PREFILL + "\",\"BlockSize\":"),
                services);
        assertTrue(indexer.http().get("/workers").body().contains("\"instance_name\":\"vllm-prefill-node1\""));

        HttpResponse<String> gone = post(
                "/unregister",
                new JsonObject()
                        .put("instance_id", PREFILL)
                        .put("tenant_id", "default")
                        .put("dp_rank", 0));
        assertEquals(200, gone.statusCode());
        assertEquals(
                "{\"status\":\"unregistered successfully\",\"removed_instances\":[\"vllm-prefill-node1|default|0\"]}",
                gone.body());
        // The Go Conductor: the key is (instance, tenant, dp_rank 0 when absent), and a key nobody holds is a 404.
        assertMooncakeError(
                post("/unregister", new JsonObject().put("instance_id", PREFILL)), 404, "not_found", "instance_id");
        assertTrue(post("/unregister", new JsonObject().put("instance_id", PREFILL))
                .body()
                .contains("service not found: vllm-prefill-node1|default|0"));
        assertJson(
                "{\"default\":{\"vllm-decode-1\":{\"longest_matched\":0,\"GPU\":0,\"DP\":{\"0\":0},\"CPU\":0,\"DISK\":0}}}",
                post("/query", query(12, null)));
    }

    @Test
    void loraAdaptersAndTenantsNeverSeeEachOthersBlocks() {
        TestPublisher adapter = indexer.engine();
        TestPublisher base = indexer.engine();
        assertEquals(
                200,
                post("/register", registration("lora-engine", adapter, "sql-adapter"))
                        .statusCode());
        assertEquals(
                200, post("/register", registration("base-engine", base, null)).statusCode());
        adapter.awaitSubscriber();
        base.awaitSubscriber();
        // The same prompt on both: the adapter engine's events name no LoRA, so its registration's applies.
        adapter.publish("", 0, store(new long[] {1, 2}, tokens(8), null));
        base.publish("", 0, store(new long[] {1, 2}, tokens(8), null));
        // And an event that names another adapter is hashed with that adapter.
        base.publish("", 1, store(new long[] {7}, new int[] {100, 101, 102, 103}, "other-adapter"));
        Await.until(
                "both indexed",
                WAIT,
                () -> post("/query", query(8, null)).body().contains("\"GPU\":8")
                        && post("/query", query(8, "sql-adapter")).body().contains("\"GPU\":8"));

        JsonObject sql = new JsonObject(post("/query", query(8, "sql-adapter")).body()).getJsonObject("default");
        assertEquals(8, sql.getJsonObject("lora-engine").getInteger("GPU"));
        assertEquals(0, sql.getJsonObject("base-engine").getInteger("GPU"), "base blocks never match an adapter query");
        JsonObject plain = new JsonObject(post("/query", query(8, null)).body()).getJsonObject("default");
        assertEquals(
                0, plain.getJsonObject("lora-engine").getInteger("GPU"), "adapter blocks never match the base model");
        assertEquals(8, plain.getJsonObject("base-engine").getInteger("GPU"));
        JsonObject empty = new JsonObject(
                        post("/query", query(8, null).put("lora_name", "")).body())
                .getJsonObject("default");
        assertEquals(plain, empty, "an empty lora_name is the base model");

        JsonObject other = new JsonObject()
                .put("model", "deepseek")
                .put("lora_name", "other-adapter")
                .put("token_ids", new JsonArray(List.of(100, 101, 102, 103)));
        Await.until(
                "the other adapter's block",
                WAIT,
                () -> post("/query", other).body().contains("\"GPU\":4"));
        assertEquals(
                0,
                new JsonObject(post("/query", other.copy().put("lora_name", "sql-adapter"))
                                .body())
                        .getJsonObject("default")
                        .getJsonObject("base-engine")
                        .getInteger("GPU"));

        // Tenants are partitions: the same model under another tenant holds nothing of these.
        assertEquals(
                200,
                post(
                                "/register",
                                registration("acme-engine", indexer.engine(), null)
                                        .put("tenant_id", "acme"))
                        .statusCode());
        assertJson(
                "{\"acme\":{\"acme-engine\":{\"longest_matched\":0,\"GPU\":0,\"DP\":{\"0\":0},\"CPU\":0,\"DISK\":0}}}",
                post("/query", query(8, null).put("tenant_id", "acme")));
    }

    /**
     * The worked example of docs/protocol/index.md#tier-semantics-compared over the wire (block size 2 here: tokens
     * 0..5 are H1, H2, H3): a Mooncake Store
     * publisher's CPU and disk objects extend each rank of the engine after its own GPU prefix, and give a rank with
     * nothing of its own the store's reach; the store itself is never listed.
     */
    @Test
    void aMooncakeStoreIsASharedPoolThatExtendsEveryInstance() {
        TestPublisher engine = indexer.engine();
        TestPublisher engineRank1 = indexer.engine();
        TestPublisher idle = indexer.engine();
        TestPublisher store = indexer.engine();
        JsonObject base = new JsonObject()
                .put("modelname", "deepseek")
                .put("tenant_id", "default")
                .put("block_size", 2);
        assertEquals(
                200,
                post(
                                "/register",
                                base.copy()
                                        .put("type", "vLLM")
                                        .put("instance_id", "engine")
                                        .put("endpoint", engine.endpoint())
                                        .put("dp_rank", 0))
                        .statusCode());
        assertEquals(
                200,
                post(
                                "/register",
                                base.copy()
                                        .put("type", "vLLM")
                                        .put("instance_id", "engine")
                                        .put("endpoint", engineRank1.endpoint())
                                        .put("dp_rank", 1))
                        .statusCode());
        assertEquals(
                200,
                post(
                                "/register",
                                base.copy()
                                        .put("type", "SGLang")
                                        .put("instance_id", "idle")
                                        .put("endpoint", idle.endpoint()))
                        .statusCode());
        assertEquals(
                200,
                post(
                                "/register",
                                base.copy()
                                        .put("type", "mooncake")
                                        .put("instance_id", "store")
                                        .put("endpoint", store.endpoint()))
                        .statusCode());
        for (TestPublisher p : List.of(engine, engineRank1, store)) {
            p.awaitSubscriber();
        }
        engine.publish("", 0, batch(new EngineEvent.Store(new long[] {100, 200}, null, tokens(4), 2, "GPU", null)));
        engineRank1.publish("", 0, batch(new EngineEvent.Store(new long[] {100}, null, tokens(2), 2, "GPU", null)));
        store.publish(
                "",
                0,
                batch(
                        new EngineEvent.Store(new long[] {100, 200}, null, tokens(4), 2, "cpu", null),
                        new EngineEvent.Store(new long[] {100}, null, tokens(2), 2, "disk", null),
                        new EngineEvent.Store(new long[] {300}, 200L, new int[] {4, 5}, 2, "disk", null),
                        new EngineEvent.Store(new long[] {999}, null, new int[] {7, 7}, 2, "GPU", null)));

        JsonObject q =
                new JsonObject().put("model", "deepseek").put("token_ids", new JsonArray(List.of(0, 1, 2, 3, 4, 5)));
        String expected = "{\"instances\":{"
                + "\"engine\":{\"longest_matched\":6,\"gpu\":4,\"dp\":{\"0\":4,\"1\":2},\"cpu\":4,\"disk\":6,"
                + "\"rank_matches\":{\"0\":{\"gpu\":4,\"cpu\":4,\"disk\":6},\"1\":{\"gpu\":2,\"cpu\":4,\"disk\":6}}},"
                + "\"idle\":{\"longest_matched\":6,\"gpu\":0,\"dp\":{\"0\":0},\"cpu\":4,\"disk\":6,"
                + "\"rank_matches\":{\"0\":{\"gpu\":0,\"cpu\":4,\"disk\":6}}}}}";
        Await.until(
                "every event is indexed",
                WAIT,
                () -> new JsonObject(indexer.http()
                                .post("/query?format=instances", q.encode())
                                .body())
                        .equals(new JsonObject(expected)));

        // The Dynamo flavor shows the same numbers for the engines and no store either.
        JsonObject dynamo = new JsonObject(indexer.http()
                        .post("/query", "{\"model_name\":\"deepseek\",\"token_ids\":[0,1,2,3,4,5]}")
                        .body())
                .getJsonObject("instances");
        assertEquals(
                new JsonObject("{\"longest_matched\":6,\"gpu\":4,\"dp\":{\"0\":4,\"1\":2},\"cpu\":4,\"disk\":6}"),
                dynamo.getJsonObject(Long.toUnsignedString(InstanceIds.of("engine"))));
        assertEquals(
                6,
                dynamo.getJsonObject(Long.toUnsignedString(InstanceIds.of("idle")))
                        .getInteger("disk"));
        assertEquals(2, dynamo.size(), "the store is not an instance: " + dynamo);
        assertTrue(indexer.http().get("/dump").body().contains("\"storage_tier\":\"disk\""));
        assertTrue(
                !indexer.http().get("/dump").body().contains("\"block_hash\":999"),
                "the store's GPU event was refused");

        // Unregistering the store takes its blocks out of every instance's reach.
        assertEquals(
                200,
                post("/unregister", new JsonObject().put("instance_id", "store"))
                        .statusCode());
        assertJson(
                "{\"default\":{\"engine\":{\"longest_matched\":4,\"GPU\":4,\"DP\":{\"0\":4,\"1\":2},\"CPU\":4,"
                        + "\"DISK\":4},\"idle\":{\"longest_matched\":0,\"GPU\":0,\"DP\":{\"0\":0},\"CPU\":0,\"DISK\":0}}}",
                post("/query", q));
    }

    /** A batch without its own rank: the registered dp_rank applies. */
    private static byte[] batch(EngineEvent... events) {
        return BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, List.of(events), null);
    }

    /** docs/api/mooncake-json.md#post-query_by_hash: tokens 0..7 at block size 4 are the rolling hashes of HV5. */
    @Test
    void queryByHashTakesRollingSequenceHashes() {
        TestPublisher pub = indexer.engine();
        assertEquals(200, post("/register", registration(PREFILL, pub, null)).statusCode());
        pub.awaitSubscriber();
        pub.publish("", 0, store(new long[] {11, 12}, tokens(8), null));
        JsonObject byHash = new JsonObject()
                .put("model", "deepseek")
                .put("block_size", 4)
                .put(
                        "seq_hashes",
                        new JsonArray()
                                .add(new java.math.BigInteger("9143094415614847814"))
                                .add(new java.math.BigInteger("9510318385840434533")));
        Await.until("indexed", WAIT, () -> post("/query_by_hash", byHash).body().contains("\"longest_matched\":8"));
        assertJson(
                "{\"default\":{\"vllm-prefill-node1\":{\"longest_matched\":8,\"GPU\":8,\"DP\":{\"0\":8},\"CPU\":8,"
                        + "\"DISK\":8}}}",
                post("/query_by_hash", byHash));
        assertEquals(
                post("/query", query(8, null)).body(),
                post("/query_by_hash", byHash).body(),
                "the same prompt as tokens or as rolling hashes");
        JsonObject legacy = new JsonObject()
                .put("model", "deepseek")
                .put("block_hash", new JsonArray(List.of("9143094415614847814", "1")));
        assertTrue(
                post("/query_by_hash", legacy).body().contains("\"longest_matched\":4"),
                "the older alias with string hashes; the prefix ends at the second, unknown hash");
        // Another block size matches nothing: zeros, as the Go Conductor keys its index by it.
        assertTrue(post("/query_by_hash", byHash.copy().put("block_size", 16))
                .body()
                .contains("\"longest_matched\":0"));
    }

    @Test
    void badRequestsGetTheConductorsErrorsAndChangeNothing() {
        TestPublisher pub = indexer.engine();
        assertEquals(200, post("/register", registration(PREFILL, pub, null)).statusCode());

        // The Go Conductor never refuses a query: an unknown model or another block size matches nothing, every
        // instance of the tenant answering zeros, and a tenant nobody registered under answers {}.
        String zeros = "{\"default\":{\"vllm-prefill-node1\":{\"longest_matched\":0,\"GPU\":0,\"DP\":{\"0\":0},"
                + "\"CPU\":0,\"DISK\":0}}}";
        assertJson(zeros, post("/query", query(8, null).put("model", "nope")));
        assertJson(zeros, post("/query", query(8, null).put("block_size", 16)));
        assertJson("{}", post("/query", query(8, null).put("tenant_id", "nobody")));
        assertJson(
                "{\"data\":{}}",
                indexer.http()
                        .post(
                                "/query?format=data",
                                query(8, null).put("tenant_id", "t2").encode()));
        assertMooncakeError(post("/query", query(8, "sql").put("lora_id", 3)), 400, "invalid_request", "lora_id");
        assertMooncakeError(post("/query", query(8, null).put("lora_id", 3)), 400, "invalid_request", "lora_id");
        assertEquals(200, post("/query", query(8, null).put("lora_id", -1)).statusCode(), "-1 is the base model");
        assertMooncakeError(
                post("/query", new JsonObject().put("model", "deepseek")), 400, "invalid_request", "token_ids");
        assertEquals(400, post("/query", query(8, null).put("token_ids", "abc")).statusCode());
        assertMooncakeError(indexer.http().post("/query?flavor=mooncake", "{not json"), 400, "invalid_request", null);

        assertMooncakeError(
                post("/register", registration("x", pub, null).put("type", "TensorRT")),
                400,
                "invalid_registration",
                "type");
        assertMooncakeError(
                post("/register", registration("x", pub, null).put("endpoint", "udp://h:1")),
                400,
                "invalid_registration",
                "endpoint");
        assertMooncakeError(
                post("/register", registration("x", pub, null).put("block_size", 0)),
                400,
                "invalid_registration",
                "block_size");
        assertMooncakeError(
                post("/register", registration(PREFILL, pub, null).put("endpoint", "tcp://127.0.0.1:1")),
                400,
                "invalid_registration",
                null);
        assertMooncakeError(
                post("/register", registration("y", pub, null).put("block_size", 16)),
                400,
                "invalid_registration",
                null);
        assertEquals(
                1,
                new JsonObject(indexer.http().get("/services").body()).getInteger("count"),
                "no refused registration was kept");

        assertEquals(
                400,
                indexer.http()
                        .post("/query?flavor=bogus", query(8, null).encode())
                        .statusCode());
        assertMooncakeError(
                post("/query_by_hash", new JsonObject().put("model", "deepseek")),
                400,
                "invalid_request",
                "seq_hashes");
        assertMooncakeError(
                post(
                        "/query_by_hash",
                        new JsonObject().put("model", "deepseek").put("seq_hashes", new JsonArray(List.of("abc")))),
                400,
                "invalid_request",
                null);
    }

    @Test
    void aMissingContentTypeIsFineForMooncakeButNotForDynamo() {
        HttpResponse<String> mooncake = indexer.http()
                .post("/register", registration(PREFILL, indexer.engine(), null).encode(), null);
        assertEquals(200, mooncake.statusCode(), mooncake.body());
        HttpResponse<String> dynamo =
                indexer.http().post("/query", "{\"model_name\":\"deepseek\",\"token_ids\":[1,2,3,4]}", null);
        assertEquals(415, dynamo.statusCode());
        assertEquals(415, indexer.http().post("/query", "{not json", null).statusCode());
        assertEquals(
                415,
                indexer.http()
                        .post("/query", query(4, null).encode(), "text/plain")
                        .statusCode());
        // A Dynamo body never becomes Mooncake, even with Mooncake-looking extras.
        HttpResponse<String> both =
                indexer.http().post("/query", "{\"model_name\":\"deepseek\",\"model\":\"x\",\"token_ids\":[1,2,3,4]}");
        assertTrue(both.body().startsWith("{\"scores\""), both.body());
    }
}
