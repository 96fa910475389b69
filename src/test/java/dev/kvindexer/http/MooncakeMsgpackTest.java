package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.IndexerNode;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.Pack;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * The C++ Conductor generation's msgpack bodies (SPEC §8.1, §8.6): the same routes, members, checks and answers as
 * JSON, in msgpack both ways, in the request's content type; {@code token_ids} also as a bin of little-endian u32s.
 */
class MooncakeMsgpackTest {
    private static final String MSGPACK = "application/msgpack";
    private IndexerNode node;
    private HttpJson http;
    private TestPublisher engine;

    @BeforeEach
    void start() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        http = new HttpJson(node.httpPort());
        engine = new TestPublisher();
    }

    @AfterEach
    void stop() {
        engine.close();
        node.close();
    }

    /** A msgpack answer read independently of our encoder: msgpack-core's own JSON rendering. */
    private static JsonObject decoded(HttpResponse<byte[]> r) {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(r.body())) {
            return new JsonObject(in.unpackValue().toJson());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] u32le(int[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : values) {
            b.putInt(v);
        }
        return b.array();
    }

    private Map<String, Object> registration() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("endpoint", engine.endpoint());
        m.put("type", "vLLM");
        m.put("modelname", "deepseek");
        m.put("tenant_id", "default");
        m.put("instance_id", "engine-a");
        m.put("block_size", 4);
        m.put("dp_rank", 0);
        return m;
    }

    private static Map<String, Object> query(Object tokens) {
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("model", "deepseek");
        q.put("token_ids", tokens);
        q.put("block_size", 4);
        return q;
    }

    @Test
    void aGatewayConversationInMsgpackGetsTheJsonAnswersInMsgpack() {
        HttpResponse<byte[]> registered = http.postBytes("/register", Pack.of(registration()), MSGPACK);
        assertEquals(200, registered.statusCode());
        assertEquals(MSGPACK, registered.headers().firstValue("content-type").orElse(""));
        assertEquals(new JsonObject("{\"status\":\"registered successfully\",\"instance_id\":\"engine-a\"}"),
                decoded(registered));

        engine.awaitSubscriber();
        engine.publish("", 0, BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, List.of(new EngineEvent.Store(
                new long[] {11, 12, 13}, null, IntStream.range(0, 12).toArray(), 4, "GPU", null)), 0));
        String json = new JsonObject().put("model", "deepseek").put("block_size", 4)
                .put("token_ids", new JsonArray(IntStream.range(0, 12).boxed().toList())).encode();
        Await.until("indexed", Duration.ofSeconds(10), () -> http.post("/query", json).body().contains("\"GPU\":12"));
        JsonObject expected = new JsonObject(http.post("/query", json).body());

        List<Integer> tokenList = IntStream.range(0, 12).boxed().toList();
        assertEquals(expected, decoded(http.postBytes("/query", Pack.of(query(tokenList)), MSGPACK)));
        assertEquals(expected, decoded(http.postBytes("/query", Pack.of(query(u32le(IntStream.range(0, 12).toArray()))),
                "application/x-msgpack; charset=binary")), "token_ids as a bin of little-endian u32");
        assertEquals(new JsonObject(http.post("/query?format=instances", json).body()),
                decoded(http.postBytes("/query?format=instances", Pack.of(query(tokenList)), "application/vnd.msgpack")));

        HttpResponse<byte[]> services = http.getBytes("/services", MSGPACK);
        assertEquals(MSGPACK, services.headers().firstValue("content-type").orElse(""));
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(services.body())) {
            assertEquals(new JsonArray(http.get("/services").body()), new JsonArray(in.unpackValue().toJson()));
        } catch (IOException e) {
            throw new AssertionError(e);
        }

        Map<String, Object> unregister = new LinkedHashMap<>();
        unregister.put("instance_id", "engine-a");
        unregister.put("tenant_id", "default");
        unregister.put("dp_rank", 0);
        assertEquals(new JsonObject("{\"status\":\"unregistered successfully\",\"removed_instances\":[\"engine-a|default|0\"]}"),
                decoded(http.postBytes("/unregister", Pack.of(unregister), MSGPACK)));
    }

    @Test
    void badMsgpackGetsTheConductorsErrorInMsgpackAndChangesNothing() {
        assertEquals(200, http.postBytes("/register", Pack.of(registration()), MSGPACK).statusCode());
        assertError(http.postBytes("/query", new byte[] {(byte) 0xc1}, MSGPACK), 400, "msgpack");
        assertError(http.postBytes("/query", new byte[] {(byte) 0x80, 0x01}, MSGPACK), 400, "trailing bytes");
        assertError(http.postBytes("/query", new byte[0], MSGPACK), 400, "empty body");
        assertError(http.postBytes("/query", Pack.of(query(new byte[] {1, 2, 3, 4, 5})), MSGPACK), 400, "multiple of 4");
        Map<String, Object> wrongSize = query(List.of(1, 2, 3, 4));
        wrongSize.put("block_size", 16);
        assertError(http.postBytes("/query", Pack.of(wrongSize), MSGPACK), 400, "block_size");
        Map<String, Object> conflicting = registration();
        conflicting.put("block_size", 8);
        assertError(http.postBytes("/register", Pack.of(conflicting), MSGPACK), 400, "");
        HttpResponse<byte[]> dynamo = http.postBytes("/query?flavor=dynamo", Pack.of(query(List.of(1))), MSGPACK);
        assertEquals(415, dynamo.statusCode(), "the Dynamo flavor reads JSON only");
        assertTrue(decoded(dynamo).getString("error").contains("application/json"));
        assertEquals(415, http.postBytes("/query?flavor=dynamo", new byte[] {(byte) 0xc1}, MSGPACK).statusCode(),
                "whatever the bytes");
        assertError(http.postBytes("/query?flavor=bogus", Pack.of(query(List.of(1))), MSGPACK), 400, "unknown flavor");
        assertEquals(415, http.postBytes("/events", Pack.of(Map.of("event_type", "cleared")), MSGPACK).statusCode(),
                "standardized events over HTTP are JSON");
        assertEquals(1, new JsonArray(http.get("/services").body()).size(), "the refused registration changed nothing");
    }

    private static void assertError(HttpResponse<byte[]> r, int status, String reason) {
        assertEquals(status, r.statusCode());
        JsonObject e = decoded(r);
        assertTrue(e.getString("error").startsWith("invalid_"), e.encode());
        assertTrue(e.getString("reason").contains(reason), e.encode());
    }
}
