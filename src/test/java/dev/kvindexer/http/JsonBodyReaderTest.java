package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The body reader gives what Json.decodeValue gives, with u32 token_ids packed into an int[]. */
class JsonBodyReaderTest {
    private static Object read(String json) {
        return JsonBodyReader.read(json.getBytes(StandardCharsets.UTF_8));
    }

    /** Undoes the packing, so a read can be compared with Vert.x's own. */
    private static Object unpacked(Object v) {
        if (v instanceof JsonBodyReader.PackedTokens p) {
            JsonArray a = new JsonArray();
            for (int t : p.tokens()) {
                long u = Integer.toUnsignedLong(t);
                a.add(u > Integer.MAX_VALUE ? (Object) u : (Object) t);
            }
            return a;
        }
        if (v instanceof JsonObject o) {
            JsonObject out = new JsonObject();
            o.getMap().forEach((k, x) -> out.put(k, unpacked(x)));
            return out;
        }
        if (v instanceof JsonArray a) {
            JsonArray out = new JsonArray();
            a.getList().forEach(x -> out.add(unpacked(x)));
            return out;
        }
        return v;
    }

    @Test
    void sameValuesAsVertxForEveryShape() {
        for (String json : List.of(
                "{\"model_name\":\"m\",\"token_ids\":[0,1,4294967295,2147483648],\"lora_name\":null}",
                "{\"token_ids\":[1,-1,2]}",
                "{\"token_ids\":[1,4294967296]}",
                "{\"token_ids\":[1.5,2]}",
                "{\"token_ids\":[1,\"x\",[3],{\"a\":1}]}",
                "{\"token_ids\":[1,18446744073709551616000]}",
                "{\"token_ids\":[]}",
                "{\"token_ids\":\"abc\"}",
                "{\"events\":[{\"token_ids\":[5,6]},{\"token_ids\":[7,-8]}],\"x\":{\"y\":[true,false,1e3]}}",
                "{\"a\":1,\"a\":2}",
                "[1,2,{\"token_ids\":[3]}]",
                "12", "\"s\"", "null")) {
            assertEquals(Json.decodeValue(json), unpacked(read(json)), json);
        }
    }

    @Test
    void u32TokenIdsArePackedAnythingElseIsNot() {
        Object packed = ((JsonObject) read("{\"token_ids\":[0,1,4294967295]}")).getValue("token_ids");
        assertTrue(packed instanceof JsonBodyReader.PackedTokens, String.valueOf(packed));
        assertArrayEquals(new int[] {0, 1, -1}, ((JsonBodyReader.PackedTokens) packed).tokens());
        assertTrue(((JsonObject) read("{\"token_ids\":[1,-1]}")).getValue("token_ids") instanceof JsonArray);
        assertTrue(((JsonObject) read("{\"block_hashes\":[1,2]}")).getValue("block_hashes") instanceof JsonArray,
                "only token_ids");
        assertEquals(Map.of(), ((JsonObject) read("{}")).getMap());
    }

    @Test
    void invalidJsonIsADecodeException() {
        for (String json : List.of("", "{", "{\"token_ids\":[1,2", "{} x", "[1,]", "{\"a\":tru}")) {
            assertThrows(DecodeException.class, () -> read(json), json);
        }
    }
}
