package dev.kvindexer.conductor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.Pack;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;
import org.msgpack.value.ValueType;

/**
 * The C++ Mooncake Conductor's HTTP contract for msgpack requests (docs/api/mooncake-cpp.md, conformance rows M1–M7) against
 * a running node, with engines and a Store master publishing over real ZMQ.
 */
class CppConductorConformanceTest {
    private static final String MSGPACK = "application/msgpack";
    private static final Duration WAIT = Duration.ofSeconds(15);
    /** VH2: tokens 1..48, block size 16, sha256_cbor, seed "0". */
    private static final long[] KEYS = {3236607068019569386L, 2758186210834249151L, 5191110061519319221L};

    private static final String[] DIGESTS = {
        "202da172482d928bbc42ab25b0151e2b895f13f41002e27b2ceabcfae6d332ea",
        "4a0a393805c6d2f0ed831000d41bb65980336c4c04895d5e26470bbec927f5bf",
        "7db7c8652c5c4a69d8f91e08e8decadf88d48c3339d35aad480a8718e6d0b0b5"
    };
    private static final String ROOT = "4e1195df020de59e0d65a33a4279f1183e7ae4e5d980e309f8b55adff2e61c3e";

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    /** A msgpack answer read independently of our encoder (msgpack-core's own rendering), keys in wire order. */
    private static String decoded(HttpResponse<byte[]> r) {
        assertEquals(MSGPACK, r.headers().firstValue("content-type").orElse(null));
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(r.body())) {
            return in.unpackValue().toJson();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private HttpResponse<byte[]> post(String path, Object body) {
        return indexer.http().postBytes(path, body instanceof byte[] raw ? raw : Pack.of(body), MSGPACK);
    }

    private HttpResponse<byte[]> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + indexer.node().httpPort() + path))
                .header("Accept", MSGPACK)
                .GET()
                .build();
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .build()
                .send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    /** A GET that names msgpack only by its Content-Type, as a C++ client may. */
    private HttpResponse<byte[]> getWithContentType(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + indexer.node().httpPort() + path))
                .header("Content-Type", MSGPACK)
                .GET()
                .build();
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .build()
                .send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    /** The root map of a msgpack answer, read with msgpack-core's own value model. */
    private static Map<String, Value> root(HttpResponse<byte[]> r) {
        assertEquals(200, r.statusCode());
        assertEquals(MSGPACK, r.headers().firstValue("content-type").orElse(null));
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(r.body())) {
            return members(in.unpackValue());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static Map<String, Value> members(Value v) {
        assertEquals(ValueType.MAP, v.getValueType(), v.toJson());
        Map<String, Value> out = new LinkedHashMap<>();
        v.asMapValue().map().forEach((k, value) -> {
            assertEquals(ValueType.STRING, k.getValueType(), "map keys are strings");
            out.put(k.asStringValue().asString(), value);
        });
        return out;
    }

    /** Each member's msgpack type, in the order the answer has them. */
    private static Map<String, ValueType> types(Map<String, Value> map) {
        Map<String, ValueType> out = new LinkedHashMap<>();
        map.forEach((k, v) -> out.put(k, v.getValueType()));
        return out;
    }

    private static Map<String, Object> profile(String seed) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("strategy", "vllm_v1");
        p.put("algorithm", "sha256_cbor");
        p.put("python_hash_seed", seed);
        p.put("index_projection", "low64_be");
        return p;
    }

    private static Map<String, Object> registration(
            String type, String instance, int rank, String endpoint, String seed) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("endpoint", endpoint);
        r.put("type", type);
        r.put("modelname", "test-model");
        r.put("instance_id", instance);
        r.put("block_size", 16);
        r.put("dp_rank", rank);
        r.put("hash_profile", profile(seed));
        return r;
    }

    private void register(String type, String instance, int rank, TestPublisher pub) {
        HttpResponse<byte[]> r = post("/register", registration(type, instance, rank, pub.endpoint(), "0"));
        assertEquals(200, r.statusCode(), decoded(r));
        assertEquals("{\"status\":\"registered successfully\",\"instance_id\":\"" + instance + "\"}", decoded(r));
        pub.awaitSubscriber();
    }

    private static byte[] bin(int[] tokens) {
        ByteBuffer b = ByteBuffer.allocate(tokens.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int t : tokens) {
            b.putInt(t);
        }
        return b.array();
    }

    private static Map<String, Object> query(Object tokens) {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("model", "test-model");
        q.put("block_size", 16);
        q.put("token_ids", tokens);
        return q;
    }

    private static Map<String, Object> object(int block, String medium) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("event_id", block);
        e.put("timestamp", 1_700_000_000_123L);
        e.put("event_type", "stored");
        e.put("model_name", "test-model");
        e.put("block_size", 16);
        e.put("additional_salt", null);
        e.put("lora_name", null);
        e.put("tenant_id", "default");
        e.put("backend_id", "backend-a");
        e.put("medium", medium);
        e.put("dp_rank", 0);
        e.put("group_id", "0");
        e.put("object_key", "test-model@tp_rank:0@pcp0@dcp0@pp_rank:0@" + DIGESTS[block] + "@" + medium);
        e.put("connector_block_hash", DIGESTS[block]);
        e.put("seq_hashes", List.of(new Pack.U64(KEYS[block])));
        e.put("base_block_idx", null);
        e.put("parent_hash", null);
        e.put("token_ids", null);
        return e;
    }

    @Test
    void m1m2TheReferencesSharedCacheResponseOverZmq() throws Exception {
        TestPublisher engine1 = indexer.engine();
        TestPublisher engine2 = indexer.engine();
        TestPublisher master = indexer.engine();
        register("vLLM", "1", 0, engine1);
        register("vLLM", "2", 1, engine2);
        register("Mooncake", "shared-pool", 0, master);
        engine1.publish(
                "",
                0,
                BatchEncoder.batch(
                        BatchEncoder.Format.VLLM_MAP,
                        1.0,
                        List.of(new EngineEvent.Store(
                                new long[] {KEYS[0], KEYS[1]},
                                null,
                                IntStream.rangeClosed(1, 32).toArray(),
                                16,
                                "GPU",
                                null)),
                        0));
        List<Object> objects = new ArrayList<>();
        for (int b = 0; b < 3; b++) {
            objects.add(object(b, "cpu"));
            objects.add(object(b, "disk"));
        }
        master.publish("", 1, Pack.of(Arrays.asList(1_700_000_000_123L, objects, 0)));

        String expected = "{\"instances\":{"
                + "\"1\":{\"longest_matched\":48,\"dp\":{\"0\":32},\"rank_matches\":{\"0\":{\"gpu\":32,\"cpu\":48,\"disk\":48}},"
                + "\"gpu\":32,\"cpu\":48,\"disk\":48},"
                + "\"2\":{\"longest_matched\":48,\"dp\":{\"1\":0},\"rank_matches\":{\"1\":{\"gpu\":0,\"cpu\":48,\"disk\":48}},"
                + "\"gpu\":0,\"cpu\":48,\"disk\":48}}}";
        byte[] tokens = bin(IntStream.rangeClosed(1, 48).toArray());
        Await.equal("the reference's answer", WAIT, expected, () -> decoded(post("/query", query(tokens))));
        assertEquals(
                expected,
                decoded(post(
                        "/query", query(IntStream.rangeClosed(1, 48).boxed().toList()))),
                "token_ids as an array answer the same");
    }

    @Test
    void m3UnknownContextsAndInstancesMatchNothing() {
        register("vLLM", "1", 0, indexer.engine());
        for (Map.Entry<String, Object> change : List.of(
                Map.entry("model", (Object) "missing-model"),
                Map.entry("tenant_id", (Object) "other"),
                Map.entry("lora_name", (Object) "other"),
                Map.entry("block_size", (Object) 32),
                Map.entry("instance_id", (Object) "missing"))) {
            Map<String, Object> q = query(List.of(1, 2, 3));
            q.put(change.getKey(), change.getValue());
            HttpResponse<byte[]> r = post("/query", q);
            assertEquals(200, r.statusCode());
            assertEquals("{\"instances\":{}}", decoded(r), change.toString());
        }
        assertEquals(
                "{\"instances\":{\"1\":{\"longest_matched\":0,\"dp\":{\"0\":0},\"rank_matches\":{\"0\":"
                        + "{\"gpu\":0,\"cpu\":0,\"disk\":0}},\"gpu\":0,\"cpu\":0,\"disk\":0}}}",
                decoded(post("/query", query(List.of()))),
                "no tokens: every registered rank with zeros");
    }

    @Test
    void m4M5ValidationAnswersInTheConductorsEnvelope() {
        HttpResponse<byte[]> r = post("/query", new byte[] {(byte) 0xc1});
        assertEquals(400, r.statusCode());
        assertEquals("{\"error\":\"Invalid msgpack object\",\"reason\":\"invalid_msgpack\"}", decoded(r));
        Map<String, Object> noSize = registration("vLLM", "e", 0, "tcp://127.0.0.1:1", "0");
        noSize.remove("block_size");
        assertEquals(
                "{\"error\":\"block_size is required\",\"reason\":\"missing\",\"field\":\"block_size\"}",
                decoded(post("/register", noSize)));
        Map<String, Object> badToken = query(List.of(1, 2147483648L));
        assertEquals(
                "{\"error\":\"token_ids element is outside the int32 range\",\"reason\":\"out_of_range\","
                        + "\"field\":\"token_ids\",\"index\":1}",
                decoded(post("/query", badToken)));
    }

    @Test
    void m5RegisteringTwiceIsOneSubscriptionAndAConflictingProfileChangesNothing() throws Exception {
        TestPublisher engine = indexer.engine();
        register("vLLM", "engine-a", 0, engine);
        HttpResponse<byte[]> again = post("/register", registration("vLLM", "engine-a", 0, engine.endpoint(), "0"));
        assertEquals(200, again.statusCode(), decoded(again));
        HttpResponse<byte[]> conflict = post(
                "/register",
                registration("vLLM", "engine-b", 0, indexer.engine().endpoint(), "1"));
        assertEquals(400, conflict.statusCode());
        assertEquals(
                "{\"error\":\"failed to register prefix context: registration conflicts with the ContextKey hash "
                        + "profile\",\"reason\":\"invalid_registration\"}",
                decoded(conflict));
        assertEquals(1, new JsonObject(decoded(get("/services"))).getInteger("count"));
        HttpResponse<byte[]> bad = post("/register", registration("vLLM", "engine-c", 0, "not-an-endpoint", "0"));
        assertEquals(400, bad.statusCode());
        assertEquals(
                "{\"error\":\"Failed to subscribe: failed to start ZMQ client: initial connection failed: failed to "
                        + "connect to not-an-endpoint: Invalid argument\",\"reason\":\"invalid_registration\","
                        + "\"field\":\"endpoint\"}",
                decoded(bad));
        assertEquals(1, new JsonObject(decoded(get("/services"))).getInteger("count"), "the failed one left nothing");
    }

    @Test
    void m5AnEndpointNoSubscriberCanUseIsTheClientsErrorAndLeavesNoContext() throws Exception {
        String before = decoded(get("/global_view"));
        for (String endpoint : List.of("not-an-endpoint", "tcp://[::1:5557", "tcp://::1:5557", "ipc://", "udp://h:1")) {
            Map<String, Object> r = registration("vLLM", "engine-x", 0, endpoint, "0");
            r.put("modelname", "never-registered");
            HttpResponse<byte[]> bad = post("/register", r);
            assertEquals(400, bad.statusCode(), endpoint);
            JsonObject body = new JsonObject(decoded(bad));
            assertEquals("invalid_registration", body.getString("reason"), endpoint);
            assertEquals("endpoint", body.getString("field"), endpoint);
            assertTrue(body.getString("error").contains(endpoint), body.encode());
        }
        assertEquals(before, decoded(get("/global_view")), "no context was created");
        assertEquals(0, new JsonObject(decoded(get("/services"))).getInteger("count"));
        TestPublisher engine = indexer.engine();
        register("vLLM", "engine-a", 0, engine);
        HttpResponse<byte[]> conflict = post("/register", registration("vLLM", "engine-a", 0, "not-an-endpoint", "0"));
        assertEquals(
                "{\"error\":\"conflicting registration for service key: engine-a|default|0\","
                        + "\"reason\":\"invalid_registration\"}",
                decoded(conflict),
                "the reference's conflicts are checked before the endpoint");
    }

    @Test
    void m6UnregisterRules() {
        HttpResponse<byte[]> unknown = post("/unregister", Map.of("instance_id", "engine-a", "dp_rank", 0));
        assertEquals(404, unknown.statusCode());
        assertEquals("{\"error\":\"service not found: engine-a|default|0\"}", decoded(unknown));
        assertEquals(
                "{\"error\":\"dp_rank is required\",\"reason\":\"missing\",\"field\":\"dp_rank\"}",
                decoded(post("/unregister", Map.of("instance_id", "engine-a"))));
        Map<String, Object> extra = new LinkedHashMap<>(Map.of("instance_id", "engine-a", "dp_rank", 0));
        extra.put("modelname", "m");
        assertEquals(
                "{\"error\":\"unsupported request field: modelname\",\"reason\":\"unknown_field\","
                        + "\"field\":\"modelname\"}",
                decoded(post("/unregister", extra)));
        register("vLLM", "engine-a", 0, indexer.engine());
        assertEquals(
                "{\"status\":\"unregistered successfully\",\"removed_instances\":[\"engine-a|default|0\"]}",
                decoded(post("/unregister", Map.of("instance_id", "engine-a", "dp_rank", 0))));
    }

    @Test
    void m7AMsgpackContentTypeGetsTheConductorsShapesWithTheirTypes() throws Exception {
        TestPublisher engine = indexer.engine();
        register("vLLM", "engine-a", 0, engine);
        Map<String, Value> services = root(getWithContentType("/services"));
        assertEquals(
                Map.of("count", ValueType.INTEGER, "services", ValueType.ARRAY), types(services), "/services members");
        assertEquals(1, services.get("count").asIntegerValue().asInt());
        Map<String, Value> service =
                members(services.get("services").asArrayValue().get(0));
        Map<String, ValueType> expected = new LinkedHashMap<>();
        expected.put("Endpoint", ValueType.STRING);
        expected.put("ReplayEndpoint", ValueType.STRING);
        expected.put("Type", ValueType.STRING);
        expected.put("ModelName", ValueType.STRING);
        expected.put("LoraName", ValueType.STRING);
        expected.put("TenantID", ValueType.STRING);
        expected.put("InstanceID", ValueType.STRING);
        expected.put("BlockSize", ValueType.INTEGER);
        expected.put("DPRank", ValueType.INTEGER);
        expected.put("CacheGroup", ValueType.NIL);
        expected.put("HashProfile", ValueType.MAP);
        assertEquals(
                List.copyOf(expected.entrySet()), List.copyOf(types(service).entrySet()), "a service's members");
        assertEquals(engine.endpoint(), service.get("Endpoint").asStringValue().asString());
        Map<String, ValueType> profile = new LinkedHashMap<>();
        for (String member : List.of("strategy", "algorithm", "python_hash_seed", "root_digest", "index_projection")) {
            profile.put(member, ValueType.STRING);
        }
        assertEquals(
                List.copyOf(profile.entrySet()),
                List.copyOf(types(members(service.get("HashProfile"))).entrySet()),
                "the hash profile's members");

        Map<String, Value> view = root(getWithContentType("/global_view"));
        assertEquals(Map.of("context_count", ValueType.INTEGER, "contexts", ValueType.ARRAY), types(view));
        Map<String, Value> context = members(view.get("contexts").asArrayValue().get(0));
        Map<String, ValueType> contextTypes = new LinkedHashMap<>();
        contextTypes.put("model_name", ValueType.STRING);
        contextTypes.put("lora_name", ValueType.STRING);
        contextTypes.put("block_size", ValueType.INTEGER);
        contextTypes.put("tenant_id", ValueType.STRING);
        contextTypes.put("prefix_count", ValueType.INTEGER);
        contextTypes.put("hash_profile", ValueType.MAP);
        contextTypes.put("instances", ValueType.MAP);
        assertEquals(
                List.copyOf(contextTypes.entrySet()), List.copyOf(types(context).entrySet()), "a context");
        Value ranks = members(context.get("instances")).get("engine-a");
        assertEquals(ValueType.ARRAY, ranks.getValueType());
        assertEquals(ValueType.INTEGER, ranks.asArrayValue().get(0).getValueType());

        HttpResponse<String> json = indexer.http().get("/services", "application/json");
        assertEquals(
                "application/json", json.headers().firstValue("content-type").orElse(null));
        assertTrue(json.body().startsWith("{\"count\":1,\"services\":[{\"Endpoint\""), json.body());
        assertEquals(
                "application/msgpack",
                indexer.http()
                        .get("/services")
                        .headers()
                        .firstValue("content-type")
                        .orElse(null),
                "a plain GET with nothing registered through the JSON API: the C++ Conductor's msgpack");
    }

    /** A wrong method on the Conductor's routes: its msgpack 405 to a client that names msgpack, JSON otherwise. */
    @Test
    void aWrongMethodIsTheConductorsMsgpack405() throws Exception {
        for (String path : List.of("/query", "/register", "/unregister")) {
            HttpResponse<byte[]> r = indexer.http().getBytes(path, MSGPACK);
            assertEquals(405, r.statusCode(), path);
            assertEquals(MSGPACK, r.headers().firstValue("content-type").orElse(null), path);
            assertEquals("{\"error\":\"Method not allowed\"}", decoded(r), path);
        }
        HttpResponse<byte[]> services = indexer.http().postBytes("/services", Pack.of(Map.of()), MSGPACK);
        assertEquals(405, services.statusCode());
        assertEquals("{\"error\":\"Method not allowed\"}", decoded(services));
        HttpResponse<String> json = indexer.http().get("/query", "application/json");
        assertEquals(405, json.statusCode());
        assertTrue(json.body().startsWith("{\"error\":"), json.body());
    }

    @Test
    void m7ServicesAndGlobalView() throws Exception {
        TestPublisher rank0 = indexer.engine();
        TestPublisher rank1 = indexer.engine();
        register("vLLM", "engine-a", 0, rank0);
        register("vLLM", "engine-a", 1, rank1);
        String profile = "{\"strategy\":\"vllm_v1\",\"algorithm\":\"sha256_cbor\",\"python_hash_seed\":\"0\","
                + "\"root_digest\":\"" + ROOT + "\",\"index_projection\":\"low64_be\"}";
        assertEquals(
                "{\"context_count\":1,\"contexts\":[{\"model_name\":\"test-model\",\"lora_name\":\"\","
                        + "\"block_size\":16,\"tenant_id\":\"default\",\"prefix_count\":0,\"hash_profile\":" + profile
                        + ",\"instances\":{\"engine-a\":[0,1]}}]}",
                decoded(get("/global_view")));
        String services = decoded(get("/services"));
        assertEquals(
                "{\"count\":2,\"services\":[{\"Endpoint\":\"" + rank0.endpoint() + "\",\"ReplayEndpoint\":\"\","
                        + "\"Type\":\"vLLM\",\"ModelName\":\"test-model\",\"LoraName\":\"\",\"TenantID\":\"default\","
                        + "\"InstanceID\":\"engine-a\",\"BlockSize\":16,\"DPRank\":0,\"CacheGroup\":null,\"HashProfile\":"
                        + profile + "}",
                services.substring(0, services.indexOf("},{") + 1));
        String json = indexer.http().get("/services", "application/json").body();
        assertTrue(
                json.contains("\"InstanceID\":\"engine-a\",\"BlockSize\":16,\"DPRank\":1,\"AdditionalSalt\":\"\"}"),
                "in JSON, the Go Conductor's shape lists the C++ registrations too: " + json);
    }
}
