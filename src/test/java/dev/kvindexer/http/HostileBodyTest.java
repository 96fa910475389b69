package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.http.CppConductorError;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBodyReader;
import dev.kvindexer.web.MsgpackBodyReader;
import dev.kvindexer.wire.Pack;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * Request bodies are untrusted: a msgpack header's declared length or count is checked against the bytes that follow
 * before anything is allocated, and nesting is bounded, so hostile bodies get a quick 400 instead of exhausting the
 * heap or the stack: in the C++ Conductor's envelope on the routes it serves ({@code invalid_msgpack}), in the
 * Mooncake JSON flavor's on {@code /query_by_hash}, whose msgpack form only section 8 defines.
 */
class HostileBodyTest {
    private static final String MSGPACK = "application/msgpack";
    private static final List<String> ROUTES = List.of("/query", "/query_by_hash", "/register", "/unregister");
    private static final List<String> CONDUCTOR_ROUTES = List.of("/query", "/register", "/unregister");
    private static final int DEPTH = JsonBodyReader.MAX_NESTING_DEPTH;
    private static IndexerNode node;
    private static HttpJson http;

    @BeforeAll
    static void start() {
        node = startNode();
        http = new HttpJson(node.httpPort());
    }

    private static IndexerNode startNode() {
        try {
            return IndexerNode.start(ServeConfig.local(0));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @AfterAll
    static void stop() {
        node.close();
    }

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    /** {@code depth} arrays of one element each, around a nil. */
    private static byte[] nestedArrays(int depth) {
        byte[] b = new byte[depth + 1];
        Arrays.fill(b, 0, depth, (byte) 0x91);
        b[depth] = (byte) 0xc0;
        return b;
    }

    private static JsonObject decoded(HttpResponse<byte[]> r) {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(r.body())) {
            return new JsonObject(in.unpackValue().toJson());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static void assertRefused(String route, byte[] body, String reason) {
        long started = System.nanoTime();
        HttpResponse<byte[]> r = http.postBytes(route, body, MSGPACK);
        long millis = (System.nanoTime() - started) / 1_000_000;
        String what = route + " " + HexFormat.of().formatHex(body, 0, Math.min(body.length, 12));
        assertEquals(400, r.statusCode(), what + ": " + new String(r.body(), StandardCharsets.UTF_8));
        JsonObject error = decoded(r);
        if (CONDUCTOR_ROUTES.contains(route)) {
            assertEquals(CppConductorError.INVALID_MSGPACK, error.getString("reason"), what + ": " + error);
            assertTrue(
                    List.of("Invalid msgpack object", "request body must be a msgpack map")
                            .contains(error.getString("error")),
                    what + ": " + error);
        } else {
            assertEquals(MooncakeJsonError.INVALID_REQUEST, error.getString("error"), what + ": " + error);
            assertTrue(error.getString("reason").contains(reason), what + ": " + error);
        }
        assertTrue(millis < 5_000, what + " took " + millis + " ms");
    }

    @Test
    void declaredLengthsBeyondTheBodyAreRefusedBeforeAnythingIsAllocated() {
        Map<String, String> hostile = new LinkedHashMap<>();
        hostile.put("dd 7f ff ff ff", "array of 2147483647 elements");
        hostile.put("dd 30 00 00 00", "array of 805306368 elements");
        hostile.put("dc ff ff", "array of 65535 elements");
        hostile.put("df 7f ff ff ff", "map of 2147483647 entries");
        hostile.put("81 a1 61 dd 40 00 00 00 c0", "array of 1073741824 elements");
        hostile.put("db 7f ff ff ff 61", "string of 2147483647 bytes");
        hostile.put("81 a9 746f6b656e5f696473 c6 7f ff ff ff 00", "bin of 2147483647 bytes");
        hostile.put("c9 7f ff ff ff 01 00", "extension value");
        hostile.put("dd ff ff ff ff", "msgpack");
        hostile.put("82 a1 61 01", "msgpack");
        for (String route : ROUTES) {
            hostile.forEach((hex, reason) -> assertRefused(route, hex(hex), reason));
        }
        assertEquals(200, http.get("/health").statusCode());
    }

    @Test
    void nestingIsBoundedAsInJsonBodies() {
        for (String route : ROUTES) {
            assertRefused(route, nestedArrays(100_000), "nest deeper than " + DEPTH);
            assertRefused(route, nestedArrays(DEPTH + 1), "nest deeper than " + DEPTH);
        }
        // The bound is JSON's: the deepest allowed body is read in both encodings (and then refused for its shape),
        // again and again, so the readers run JIT-compiled too, whose frames are larger than the interpreter's.
        String deepJson = "[".repeat(DEPTH) + "]".repeat(DEPTH);
        for (int round = 0; round < 50; round++) {
            for (String route : ROUTES) {
                assertRefused(route, nestedArrays(DEPTH), "expected a JSON object");
                HttpResponse<String> json = http.post(route, deepJson);
                assertEquals(422, json.statusCode(), route + ": " + json.body());
            }
        }
        HttpResponse<String> tooDeep = http.post("/query", "[" + deepJson + "]");
        assertEquals(400, tooDeep.statusCode(), tooDeep.body());
        assertTrue(new JsonObject(tooDeep.body()).getString("error").contains("nesting depth"), tooDeep.body());
        assertEquals(200, http.get("/health").statusCode());
    }

    @Test
    void theReaderGivesTheJsonValuesOfEveryForm() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("s", "héllo");
        body.put("n", null);
        body.put("t", true);
        body.put("i", -5);
        body.put("u", Long.MAX_VALUE);
        body.put("f", 1.5);
        body.put("a", List.of(1, List.of(2, 3), Map.of("k", "v")));
        body.put("token_ids", new byte[] {1, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        body.put("b", new byte[] {2, 0, 0, 0});
        JsonObject read = assertInstanceOf(JsonObject.class, MsgpackBodyReader.read(Pack.of(body)));
        assertEquals("héllo", read.getString("s"));
        assertTrue(read.containsKey("n") && read.getValue("n") == null);
        assertEquals(Boolean.TRUE, read.getValue("t"));
        assertEquals(-5L, read.getValue("i"));
        assertEquals(Long.MAX_VALUE, read.getValue("u"));
        assertEquals(1.5, read.getValue("f"));
        assertEquals(new JsonArray("[1,[2,3],{\"k\":\"v\"}]"), read.getJsonArray("a"));
        assertEquals(
                List.of(1, -1),
                Arrays.stream(((JsonBodyReader.PackedTokens) read.getValue("token_ids")).tokens())
                        .boxed()
                        .toList(),
                "token_ids as a bin of little-endian u32, packed");
        assertEquals(new JsonArray("[2]"), read.getJsonArray("b"), "any other bin is an array of u32");
        assertEquals(
                new java.math.BigInteger("18446744073709551615"),
                MsgpackBodyReader.read(hex("cf ff ff ff ff ff ff ff ff")),
                "a u64 above i64 stays unsigned");
        HttpError badUtf8 = assertThrows(HttpError.class, () -> MsgpackBodyReader.read(hex("a3 ed a0 80")));
        assertTrue(badUtf8.getMessage().contains("not valid UTF-8"), badUtf8.getMessage());
        assertEquals(
                new JsonObject("{\"a\":2,\"b\":[]}"),
                MsgpackBodyReader.read(hex("83 a1 61 01 a1 61 02 a1 62 90")),
                "a repeated key counts as an entry, and the later value wins");
        HttpError key = assertThrows(HttpError.class, () -> MsgpackBodyReader.read(hex("81 01 02")));
        assertTrue(key.getMessage().contains("a key of `body` is not a string"), key.getMessage());
    }
}
