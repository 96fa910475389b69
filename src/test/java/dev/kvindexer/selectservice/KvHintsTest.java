package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SelectServicePerTest.ok;
import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * KV hints on bookings over real HTTP, from blocks engines publish over real ZMQ into the embedded index
 * (docs/api/selection.md#kv-hints). Bookings are pinned, so which rank is the target is the test's choice.
 */
class KvHintsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int[] TOKENS = IntStream.rangeClosed(1, 16).toArray();
    /** An engine hash above 2^63 (18446744073709551614): hints name it unsigned, as engines do. */
    private static final long HIGH_HASH = -2L;

    @RegisterExtension
    final SelectServicePerTest service = new SelectServicePerTest();

    private HttpJson http;

    /**
     * Worker 1 (decode, ranks 2 and 3, only rank 3 caching): 2 device blocks, 1 host-pinned and 1 disk block beyond
     * them. Worker 2 (decode): 1 device block. Worker 3 (prefill): all 4 blocks on the device.
     */
    @Test
    void aBookingNamesTheSameTypeRankWithTheLongestPrefix() throws Exception {
        http = service.start(Map.of());
        try (TestPublisher w1r2 = new TestPublisher();
                TestPublisher w1r3 = new TestPublisher();
                TestPublisher w2 = new TestPublisher();
                TestPublisher w3 = new TestPublisher()) {
            register(worker(1, "decode", null, w1r2, w1r3)
                    .put("data_parallel_start_rank", 2)
                    .put("data_parallel_size", 2)
                    .put(
                            "router_hint_source_control_endpoints",
                            new JsonObject().put("2", "tcp://w1:7002").put("3", "tcp://w1:7003")));
            register(worker(2, "decode", null, w2));
            register(worker(3, "prefill", null, w3));
            publish(
                    w1r3,
                    3,
                    new EngineEvent.Store(new long[] {HIGH_HASH, 12}, null, blocks(0, 2), 4, "GPU", null),
                    new EngineEvent.Store(new long[] {13}, 12L, blocks(2, 3), 4, "CPU", null),
                    new EngineEvent.Store(new long[] {14}, 13L, blocks(3, 4), 4, "DISK", null));
            publish(w2, 0, new EngineEvent.Store(new long[] {21}, null, blocks(0, 1), 4, "GPU", null));
            publish(w3, 0, new EngineEvent.Store(new long[] {31, 32, 33, 34}, null, blocks(0, 4), 4, "GPU", null));
            Await.equal(
                    "every engine's blocks are indexed", WAIT, "1/2:0/0/0 1/3:2/3/4 2/0:1/1/1 3/0:4/4/4", this::reach);

            String hint = "{\"protocol_version\":\"0.1\",\"message_id\":\"%s\",\"actions\":[{\"action_id\":\"a1\","
                    + "\"action_type\":\"kv.fetch\",\"action_version\":\"1.0\",\"payload\":{\"block_hashes\":"
                    + "[18446744073709551614,12,13],\"source_control_endpoint\":\"tcp://w1:7003\"}}]}";
            JsonObject toWorker2 = book("to-2", 2, 0);
            assertEquals(
                    hint.formatted("to-2"),
                    toWorker2.getJsonObject("kv_hint").encode(),
                    "worker 1 rank 3: device and host-pinned blocks from the first, its own hashes; not the disk block,"
                            + " not worker 3 of another type");
            List<String> members = List.copyOf(toWorker2.fieldNames());
            assertEquals("kv_hint", members.get(members.size() - 1), "the hint closes the answer");

            assertEquals(
                    hint.formatted("to-1-2"),
                    book("to-1-2", 1, 2).getJsonObject("kv_hint").encode(),
                    "another rank of the chosen worker is a source too");
            assertFalse(
                    book("to-1-3", 1, 3).containsKey("kv_hint"),
                    "the chosen rank holds the longest prefix of its type");

            JsonObject selected =
                    ok(200, http.post("/select", request("query-only", 2, 0).encode()));
            assertEquals(2, selected.getLong("worker_id"));
            assertFalse(selected.containsKey("kv_hint"), "a selection that books nothing carries no hint");
            JsonObject replayed =
                    ok(201, http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"query-only\"}"));
            assertFalse(replayed.containsKey("kv_hint"), "a replayed booking answers as Dynamo's does, without one");
        }
    }

    /** Worker 1 (a state agent) caches 3 blocks, workers 2 and 4 cache 1 each, worker 3 (a state agent) none. */
    @Test
    void aStateAgentWorkerTakesHintsButIsNeverTheirSource() throws Exception {
        http = service.start(Map.of());
        try (TestPublisher w1 = new TestPublisher();
                TestPublisher w2 = new TestPublisher();
                TestPublisher w3 = new TestPublisher();
                TestPublisher w4 = new TestPublisher()) {
            register(worker(1, "decode", "state_agent_v2", w1));
            register(worker(2, "decode", null, w2));
            register(worker(3, "decode", "state_agent_v2", w3));
            register(worker(4, "decode", null, w4));
            publish(w1, 0, new EngineEvent.Store(new long[] {11, 12, 13}, null, blocks(0, 3), 4, "GPU", null));
            publish(w2, 0, new EngineEvent.Store(new long[] {21}, null, blocks(0, 1), 4, "GPU", null));
            publish(w4, 0, new EngineEvent.Store(new long[] {41}, null, blocks(0, 1), 4, "GPU", null));
            Await.equal(
                    "the engines' blocks are indexed", WAIT, "1/0:3/3/3 2/0:1/1/1 3/0:0/0/0 4/0:1/1/1", this::reach);

            assertFalse(
                    book("to-2", 2, 0).containsKey("kv_hint"),
                    "the only longer prefix is a state agent's, and worker 4's is no longer than its own");
            JsonObject toWorker3 = book("to-3", 3, 0).getJsonObject("kv_hint");
            JsonObject payload =
                    toWorker3.getJsonArray("actions").getJsonObject(0).getJsonObject("payload");
            assertEquals(
                    new JsonObject()
                            .put("block_hashes", new JsonArray().add(21))
                            .put("source_control_endpoint", "tcp://w2:7000"),
                    payload,
                    "worker 2 is the longest source that is no state agent (and ties with worker 4 by its lower id)");
        }
    }

    /** Without KV events the index holds bookings, not what engines cache: nothing to fetch from. */
    @Test
    void noHintWithKvEventsOff() throws Exception {
        http = service.start(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
        register(worker(1, "decode", null));
        register(worker(2, "decode", null));
        book("to-1", 1, 0);
        Await.equal("worker 1's booking is in the index", WAIT, "1/0:4/4/4 2/0:0/0/0", this::reach);
        assertFalse(book("to-2", 2, 0).containsKey("kv_hint"));
    }

    @Test
    void theCatalogEchoesTheHintMembersAsSent() throws Exception {
        http = service.start(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
        JsonObject sent = worker(5, "decode", "state_agent_v2")
                .put("data_parallel_size", 2)
                .put(
                        "router_hint_source_control_endpoints",
                        new JsonObject().put("1", "tcp://b:2").put("0", ""));
        JsonObject record = register(sent);
        assertEquals(
                "\"router_hint_worker_type\":\"decode\",\"router_hint_source_control_endpoints\":"
                        + "{\"1\":\"tcp://b:2\",\"0\":\"\"},\"kv_event_source_mode\":\"state_agent_v2\"}",
                record.encode().substring(record.encode().indexOf("\"router_hint_worker_type\"")));
        assertEquals(
                new JsonArray().add(record), new JsonArray(http.get("/workers").body()));

        JsonObject patched = ok(
                200,
                http.patch(
                        "/workers/5",
                        "{\"router_hint_source_control_endpoints\":{\"0\":\"tcp://c:3\"},\"kv_event_source_mode\":null}"));
        assertEquals(
                new JsonObject().put("0", "tcp://c:3"), patched.getJsonObject("router_hint_source_control_endpoints"));
        assertEquals("decode", patched.getString("router_hint_worker_type"));
        assertEquals("state_agent_v2", patched.getString("kv_event_source_mode"), "null keeps the stored value");

        JsonObject plain = register(new JsonObject()
                .put("worker_id", 6)
                .put("model_name", "model")
                .put("endpoint", "http://w6")
                .put("block_size", 4));
        assertFalse(plain.containsKey("router_hint_worker_type"));
        assertFalse(plain.containsKey("router_hint_source_control_endpoints"));
        assertFalse(plain.containsKey("kv_event_source_mode"));
    }

    @Test
    void badHintMembersAre422AndChangeNothing() throws Exception {
        http = service.start(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
        register(worker(1, "decode", null));
        String before = http.get("/workers").body();
        String longEndpoint = "tcp://" + "h".repeat(2048) + ":1";
        Map<String, Object> refused = Map.of(
                "router_hint_worker_type",
                7,
                "kv_event_source_mode",
                true,
                "router_hint_source_control_endpoints",
                "tcp://x:1");
        for (Map.Entry<String, Object> bad : refused.entrySet()) {
            assertError(
                    422,
                    "`" + bad.getKey() + "`: invalid type",
                    http.post(
                            "/workers",
                            worker(1, "prefill", null)
                                    .put(bad.getKey(), bad.getValue())
                                    .encode()));
            assertError(
                    422,
                    "`" + bad.getKey() + "`: invalid type",
                    http.patch(
                            "/workers/1",
                            new JsonObject().put(bad.getKey(), bad.getValue()).encode()));
        }
        Map<String, JsonObject> endpoints = Map.of(
                "invalid rank `zero`", new JsonObject().put("zero", "tcp://x:1"),
                "invalid rank `4294967296`", new JsonObject().put("4294967296", "tcp://x:1"),
                "`router_hint_source_control_endpoints.0`: invalid type", new JsonObject().put("0", 5),
                "`router_hint_source_control_endpoints.0`: invalid type, expected a string",
                        new JsonObject().putNull("0"),
                "longer than 2048 characters", new JsonObject().put("0", longEndpoint),
                "2 entries for 1 ranks", new JsonObject().put("0", "tcp://x:1").put("1", "tcp://x:2"));
        for (Map.Entry<String, JsonObject> bad : endpoints.entrySet()) {
            assertError(
                    422,
                    bad.getKey(),
                    http.post(
                            "/workers",
                            worker(1, "prefill", null)
                                    .put("router_hint_source_control_endpoints", bad.getValue())
                                    .encode()));
            assertError(
                    422,
                    bad.getKey(),
                    http.patch(
                            "/workers/1",
                            new JsonObject()
                                    .put("router_hint_source_control_endpoints", bad.getValue())
                                    .encode()));
        }
        assertEquals(before, http.get("/workers").body(), "no refused request changed the catalog");
    }

    /**
     * Worker {@code id} of model {@code model}, block size 4, hint type {@code type}, a control endpoint for rank 0,
     * and one publisher per rank (none with KV events off).
     */
    private static JsonObject worker(long id, String type, String sourceMode, TestPublisher... ranks) {
        JsonObject w = new JsonObject()
                .put("worker_id", id)
                .put("model_name", "model")
                .put("endpoint", "http://w" + id)
                .put("block_size", 4)
                .put("router_hint_worker_type", type)
                .put("router_hint_source_control_endpoints", new JsonObject().put("0", "tcp://w" + id + ":7000"));
        if (sourceMode != null) {
            w.put("kv_event_source_mode", sourceMode);
        }
        if (ranks.length == 1) {
            w.put("kv_events_endpoint", ranks[0].endpoint());
        } else if (ranks.length > 1) {
            JsonObject endpoints = new JsonObject();
            for (int i = 0; i < ranks.length; i++) {
                endpoints.put(Integer.toString(2 + i), ranks[i].endpoint());
            }
            w.put("kv_events_endpoints", endpoints);
        }
        return w;
    }

    private JsonObject register(JsonObject worker) {
        JsonObject record = ok(201, http.post("/workers", worker.encode()));
        assertEquals("schedulable", record.getString("lifecycle"), record.encode());
        return record;
    }

    private static void publish(TestPublisher engine, int rank, EngineEvent... events) {
        engine.awaitSubscriber();
        engine.publish("", 0, BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, Arrays.asList(events), rank));
    }

    /** Tokens of blocks {@code from} (inclusive) to {@code to} of the prompt. */
    private static int[] blocks(int from, int to) {
        return Arrays.copyOfRange(TOKENS, from * 4, to * 4);
    }

    private static JsonObject request(String selectionId, long workerId, int dpRank) {
        return new JsonObject()
                .put("model_name", "model")
                .put("selection_id", selectionId)
                .put("token_ids", new JsonArray(Arrays.stream(TOKENS).boxed().toList()))
                .put(
                        "pinned_worker",
                        new JsonObject().put("worker_id", workerId).put("dp_rank", dpRank));
    }

    private JsonObject book(String selectionId, long workerId, int dpRank) {
        JsonObject answer = ok(
                200,
                http.post(
                        "/select_and_reserve",
                        request(selectionId, workerId, dpRank).encode()));
        assertEquals(workerId, answer.getLong("worker_id"));
        assertEquals(dpRank, answer.getInteger("dp_rank"));
        return answer;
    }

    /** Each schedulable rank's device / host-pinned / disk reach of the prompt, in blocks: "worker/rank:d/h/k ...". */
    private String reach() {
        return SelectServicePerTest.overlapRows(http, TOKENS, "device_blocks", "host_pinned_blocks", "disk_blocks");
    }
}
