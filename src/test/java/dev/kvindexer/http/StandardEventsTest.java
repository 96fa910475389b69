package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.Pack;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * POST /events: standardized KV events (docs/protocol/events.md#standardized-kv-events) as JSON from an engine without
 * ZMQ.
 */
class StandardEventsTest {
    private static final int BS = 4;
    private IndexerNode node;
    private HttpJson http;
    /** Rolling hashes of tokens 0..11, which such an engine sends as its block hashes. */
    private final long[] seq = BlockHasher.sequenceHashes(
            BlockHasher.localHashes(IntStream.range(0, 12).toArray(), BS, BlockHasher.BASE_SEED));

    @BeforeEach
    void start() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        http = new HttpJson(node.httpPort());
        JsonObject register = new JsonObject()
                .put("endpoint", "tcp://127.0.0.1:1")
                .put("type", "vLLM")
                .put("modelname", "m")
                .put("instance_id", "custom-engine")
                .put("block_size", BS);
        assertEquals(200, http.post("/register", register.encode()).statusCode());
    }

    @AfterEach
    void stop() {
        node.close();
    }

    private static Object u64(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }

    private JsonObject event(long id, String type) {
        return new JsonObject()
                .put("event_id", id)
                .put("timestamp", 1739145600000L)
                .put("event_type", type)
                .put("model_name", "m")
                .put("block_size", BS)
                .put("additional_salt", null)
                .put("lora_name", null)
                .put("tenant_id", "default")
                .put("backend_id", "custom-engine")
                .put("medium", "gpu")
                .put("dp_rank", 0);
    }

    private JsonObject stored(long id, int fromBlock, int blocks) {
        JsonArray hashes = new JsonArray();
        for (int b = fromBlock; b < fromBlock + blocks; b++) {
            hashes.add(u64(seq[b]));
        }
        return event(id, "stored")
                .put("seq_hashes", hashes)
                .put("base_block_idx", fromBlock)
                .put("parent_hash", fromBlock == 0 ? null : u64(seq[fromBlock - 1]))
                .put(
                        "token_ids",
                        new JsonArray(IntStream.range(fromBlock * BS, (fromBlock + blocks) * BS)
                                .boxed()
                                .toList()));
    }

    private HttpResponse<String> post(JsonObject... events) {
        return http.post(
                "/events",
                new JsonObject()
                        .put("events", new JsonArray(List.of((Object[]) events)))
                        .encode());
    }

    private int gpuTokens() {
        JsonObject q = new JsonObject()
                .put("model", "m")
                .put("token_ids", new JsonArray(IntStream.range(0, 12).boxed().toList()));
        return new JsonObject(http.post("/query", q.encode()).body())
                .getJsonObject("default")
                .getJsonObject("custom-engine")
                .getInteger("GPU");
    }

    @Test
    void eventsApplyInEventIdOrderWithStaleOnesDroppedAndGapsReported() {
        HttpResponse<String> first = post(stored(0, 0, 2));
        assertEquals(200, first.statusCode(), first.body());
        assertEquals("{\"status\":\"ok\",\"applied\":1,\"stale\":0,\"gaps\":0}", first.body());
        assertEquals(8, gpuTokens());
        assertEquals(
                "{\"status\":\"ok\",\"applied\":1,\"stale\":0,\"gaps\":0}",
                http.post("/events", stored(1, 2, 1).encode()).body(),
                "a single event is a body too");
        assertEquals(12, gpuTokens());
        // The engine's seq_hashes are rolling hashes, so Mooncake's /query_by_hash finds the same blocks.
        JsonObject byHash = new JsonObject()
                .put("model", "m")
                .put(
                        "seq_hashes",
                        new JsonArray().add(u64(seq[0])).add(u64(seq[1])).add(u64(seq[2])));
        assertTrue(http.post("/query_by_hash", byHash.encode()).body().contains("\"longest_matched\":12"));

        assertEquals(
                "{\"status\":\"ok\",\"applied\":0,\"stale\":1,\"gaps\":0}",
                post(stored(1, 2, 1)).body());
        JsonObject removeLast = event(5, "removed").put("seq_hashes", new JsonArray().add(u64(seq[2])));
        assertEquals(
                "{\"status\":\"ok\",\"applied\":1,\"stale\":0,\"gaps\":3}",
                post(removeLast).body());
        assertEquals(8, gpuTokens());
        assertEquals(1, node.counters().warningCount(WarningKind.STALE_EVENT));
        assertEquals(3, node.counters().warningCount(WarningKind.EVENT_ID_GAP));
        MetricsPage metrics = MetricsPage.of(http);
        assertEquals(1, metrics.value("kvindexer_gaps_total{source=\"event_id\"}"), "one gap, of three event_ids");
        assertEquals(3, metrics.value("dynamo_kvrouter_kv_cache_event_warnings{warning_kind=\"event_id_gap\"}"));

        assertEquals(
                "{\"status\":\"ok\",\"applied\":1,\"stale\":0,\"gaps\":0}",
                post(event(6, "cleared")).body());
        assertEquals(0, gpuTokens());
    }

    /**
     * An engine that sends no tokens (docs/protocol/events.md#standardized-events-into-index-operations): its
     * seq_hashes alone place the blocks, and both flavors' token
     * queries, the hash query and removals find them.
     */
    @Test
    void storedEventsWithoutTokensArePlacedByTheirSequenceHashes() {
        HttpResponse<String> r =
                post(stored(0, 0, 2).put("token_ids", null), stored(1, 2, 1).put("token_ids", new JsonArray()));
        assertEquals("{\"status\":\"ok\",\"applied\":2,\"stale\":0,\"gaps\":0}", r.body());
        assertEquals(12, gpuTokens());
        JsonObject dynamo = new JsonObject()
                .put("model_name", "m")
                .put("token_ids", new JsonArray(IntStream.range(0, 12).boxed().toList()));
        assertEquals(
                3,
                new JsonObject(http.post("/query", dynamo.encode()).body())
                                .getJsonObject("scores")
                                .getJsonObject(
                                        Long.toUnsignedString(dev.kvindexer.registry.InstanceIds.of("custom-engine")))
                                .getInteger("0")
                        / BS,
                "the Dynamo flavor sees them too");
        JsonObject byHash = new JsonObject()
                .put("model", "m")
                .put("seq_hashes", new JsonArray().add(u64(seq[0])).add(u64(seq[1])));
        assertTrue(http.post("/query_by_hash", byHash.encode()).body().contains("\"longest_matched\":8"));
        post(event(2, "removed").put("seq_hashes", new JsonArray().add(u64(seq[1]))));
        assertEquals(4, gpuTokens(), "removing block 2 cuts the prefix there");
        assertTrue(http.get("/dump").body().contains("\"sequence_events\":[{"), "kept apart from Dynamo's events");
    }

    /**
     * The same events as msgpack maps inside an ordinary ZMQ batch
     * (docs/protocol/events.md#standardized-events-into-index-operations): the batch seq orders them.
     */
    @Test
    void standardizedEventsOverZmqIndexLikeAnyEngine() {
        try (TestPublisher pub = new TestPublisher()) {
            JsonObject register = new JsonObject()
                    .put("endpoint", pub.endpoint())
                    .put("type", "vLLM")
                    .put("modelname", "m")
                    .put("instance_id", "zmq-engine")
                    .put("block_size", BS);
            assertEquals(200, http.post("/register", register.encode()).statusCode());
            pub.awaitSubscriber();
            Map<String, Object> stored = new LinkedHashMap<>();
            stored.put("event_id", 0);
            stored.put("event_type", "stored");
            stored.put("block_size", BS);
            stored.put("medium", "gpu");
            stored.put("seq_hashes", List.of(new Pack.U64(seq[0]), new Pack.U64(seq[1])));
            stored.put("base_block_idx", 0);
            stored.put("parent_hash", null);
            stored.put("token_ids", IntStream.range(0, 8).boxed().toList());
            pub.publish("", 0, Pack.batch(null, stored));
            JsonObject q = new JsonObject()
                    .put("model", "m")
                    .put(
                            "token_ids",
                            new JsonArray(IntStream.range(0, 8).boxed().toList()));
            Await.until(
                    "indexed from ZMQ",
                    Duration.ofSeconds(10),
                    () -> http.post("/query", q.encode()).body().contains("\"zmq-engine\":{\"longest_matched\":8"));

            // Without token_ids, a prompt's blocks are placed by their sequence hashes alone.
            int[] other = IntStream.range(100, 112).toArray();
            long[] otherSeq = BlockHasher.sequenceHashes(BlockHasher.localHashes(other, BS, BlockHasher.BASE_SEED));
            Map<String, Object> tokenless = new LinkedHashMap<>(stored);
            tokenless.put("event_id", 1);
            tokenless.put(
                    "seq_hashes",
                    List.of(new Pack.U64(otherSeq[0]), new Pack.U64(otherSeq[1]), new Pack.U64(otherSeq[2])));
            tokenless.remove("token_ids");
            pub.publish("", 1, Pack.batch(null, tokenless));
            JsonObject q12 = new JsonObject()
                    .put("model", "m")
                    .put("token_ids", new JsonArray(IntStream.of(other).boxed().toList()));
            Await.until(
                    "token-less blocks from ZMQ",
                    Duration.ofSeconds(10),
                    () -> http.post("/query", q12.encode()).body().contains("\"zmq-engine\":{\"longest_matched\":12"));
        }
    }

    @Test
    void aBadEventAnywhereInTheRequestChangesNothing() {
        JsonObject good = stored(0, 0, 2);
        assertRefused(
                post(good, stored(1, 2, 1).put("backend_id", "stranger")), 404, "events[1]: backend_id `stranger`");
        assertRefused(post(good, stored(1, 2, 1).put("seq_hashes", new JsonArray())), 422, "events[1]: `seq_hashes`");
        assertRefused(post(good, stored(1, 2, 1).put("seq_hashes", new JsonArray().add("x1"))), 422, "seq_hashes[0]");
        assertRefused(
                post(good, stored(1, 2, 1).put("token_ids", null).put("parent_hash", null)),
                422,
                "`parent_hash` is required below the root");
        assertRefused(post(good, stored(1, 2, 1).put("token_ids", new JsonArray(List.of(1, 2)))), 422, "need 4");
        assertRefused(post(good, stored(1, 2, 1).put("parent_hash", null)), 422, "`parent_hash` is required");
        assertRefused(post(good, stored(1, 2, 1).put("block_size", 16)), 422, "block_size 16 differs");
        assertRefused(post(good, stored(1, 2, 1).put("dp_rank", 1_000_000)), 422, "`dp_rank`: 1000000 is over 65535");
        assertRefused(post(good, event(1, "evicted")), 422, "unknown value `evicted`");
        JsonObject untyped = event(1, "cleared");
        untyped.remove("event_type");
        assertRefused(
                post(good, untyped),
                422,
                "events[1]: Failed to deserialize the JSON body into the target type: " + "missing field `event_type`");
        assertRefused(post(good, stored(1, 2, 1).put("model_name", "other")), 404, "no indexer for model=other");
        assertRefused(http.post("/events", "{\"events\":[]}"), 422, "`events` is empty");
        assertRefused(http.post("/events", "{not json"), 400, "");
        assertRefused(http.post("/events", good.encode(), null), 415, "Content-Type");
        assertEquals(0, gpuTokens(), "nothing of any refused request was applied");
        assertEquals(200, post(good).statusCode());
        assertEquals(8, gpuTokens());
    }

    /** Members are read in the reference's order: a body with two faults is refused for the one it meets first. */
    @Test
    void theFirstFaultRefusedIsTheOneTheReferenceMeetsFirst() {
        HttpResponse<String> unknownModel =
                post(event(0, "cleared").put("model_name", "nope").put("dp_rank", "x"));
        assertEquals(404, unknownModel.statusCode(), unknownModel.body());
        assertTrue(unknownModel.body().contains("no indexer for model=nope"), unknownModel.body());

        HttpResponse<String> unknownBackend =
                post(event(0, "cleared").put("backend_id", "other").put("medium", 5));
        assertEquals(404, unknownBackend.statusCode(), unknownBackend.body());

        HttpResponse<String> noBlocks = post(event(0, "stored")
                .put("seq_hashes", new JsonArray())
                .put("parent_hash", "x")
                .put("token_ids", "y"));
        assertEquals(422, noBlocks.statusCode(), noBlocks.body());
        assertTrue(noBlocks.body().contains("a stored event names at least one block"), noBlocks.body());
        assertEquals(0, gpuTokens());
    }

    @Test
    void aBlockSizeNear2To31TimesTheBlockCountDoesNotOverflow() {
        int huge = (1 << 30) + 1;
        JsonObject register = new JsonObject()
                .put("endpoint", "tcp://127.0.0.1:1")
                .put("type", "vLLM")
                .put("modelname", "big")
                .put("instance_id", "big-engine")
                .put("block_size", huge);
        assertEquals(200, http.post("/register", register.encode()).statusCode());
        JsonObject event =
                stored(0, 0, 3).put("model_name", "big").put("block_size", huge).put("backend_id", "big-engine");
        assertRefused(post(event), 422, "need " + 3L * huge);
    }

    private static void assertRefused(HttpResponse<String> r, int status, String text) {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(new JsonObject(r.body()).getString("error").contains(text), r.body());
    }
}
