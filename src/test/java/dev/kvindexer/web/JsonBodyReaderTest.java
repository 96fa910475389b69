package dev.kvindexer.web;

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
                "12",
                "\"s\"",
                "null")) {
            assertEquals(Json.decodeValue(json), unpacked(read(json)), json);
        }
    }

    @Test
    void u32TokenIdsArePackedAnythingElseIsNot() {
        Object packed = ((JsonObject) read("{\"token_ids\":[0,1,4294967295]}")).getValue("token_ids");
        assertTrue(packed instanceof JsonBodyReader.PackedTokens, String.valueOf(packed));
        assertArrayEquals(new int[] {0, 1, -1}, ((JsonBodyReader.PackedTokens) packed).tokens());
        assertTrue(((JsonObject) read("{\"token_ids\":[1,-1]}")).getValue("token_ids") instanceof JsonArray);
        assertTrue(
                ((JsonObject) read("{\"block_hashes\":[1,2]}")).getValue("block_hashes") instanceof JsonArray,
                "only token_ids");
        assertEquals(Map.of(), ((JsonObject) read("{}")).getMap());
    }

    @Test
    void invalidJsonIsADecodeException() {
        for (String json : List.of("", "{", "{\"token_ids\":[1,2", "{} x", "[1,]", "{\"a\":tru}")) {
            assertThrows(DecodeException.class, () -> read(json), json);
        }
    }

    private static final List<String> RAW_SHAPES = List.of(
            "{\"model_name\":\"m\",\"token_ids\":[0,1,4294967295,2147483648],\"lora_name\":null}",
            " {\n\t\"token_ids\" : [ 1 ,\r\n 2\t] , \"x\":[{\"token_ids\":[-1]}] } ",
            "{\"token_ids\":[01]}",
            "{\"token_ids\":[00,1]}",
            "{\"token_ids\":[-0]}",
            "{\"token_ids\":[1e2]}",
            "{\"token_ids\":[1.0]}",
            "{\"token_ids\":[1,]}",
            "{\"token_ids\":[,1]}",
            "{\"token_ids\":[1 2]}",
            "{\"token_ids\":[9999999999]}",
            "{\"token_ids\":[42949672950]}",
            "{\"token_ids\":[4294967296]}",
            "{\"token_ids\":[1],\"token_ids\":[2]}",
            "{\"token_ids\":[1],\"token_ids\":[]}",
            "{\"token\\u005fids\":[1],\"token_ids\":[2]}",
            "{\"a\":\"\\\"token_ids\\\":[1]\",\"token_ids\":[3]}",
            "{\"a\":{\"token_ids\":[5]},\"token_ids\":[6],\"b\":[\"token_ids\",[7]]}",
            "{\"token_ids\":[1,2], x}",
            "{\"token_ids\":[1]} x",
            "{\"token_ids\":[1]}}",
            "{\"token_ids\":[1,2]",
            "{\"token_ids\":[1,2,",
            "{\"a\":\"x, \"token_ids\":[1,2]}",
            "{\"token_ids\":[1]",
            "{\"token_ids\":[]}");

    /**
     * Either Vert.x and the reader give the same value, or both refuse the body, the reader with the message its general
     * path gives (the raw token path never changes an error answer).
     */
    private static void assertSameAsVertx(String json) {
        Object expected;
        try {
            expected = Json.decodeValue(json);
        } catch (DecodeException e) {
            DecodeException ours = assertThrows(DecodeException.class, () -> read(json), json);
            DecodeException general = assertThrows(
                    DecodeException.class, () -> JsonBodyReader.parse(json.getBytes(StandardCharsets.UTF_8)), json);
            assertEquals(general.getMessage(), ours.getMessage(), json);
            return;
        }
        assertEquals(expected, unpacked(read(json)), json);
    }

    @Test
    void rawTokenArraysReadExactlyAsJackson() {
        RAW_SHAPES.forEach(JsonBodyReaderTest::assertSameAsVertx);
        // The common shapes do take the raw path; odd ones are left to the general parser.
        assertArrayEquals(
                new int[] {0, 1, -1, Integer.MIN_VALUE},
                RawTokenIds.find(RAW_SHAPES.get(0).getBytes(StandardCharsets.UTF_8)).tokens);
        assertArrayEquals(
                new int[] {1, 2}, RawTokenIds.find(RAW_SHAPES.get(1).getBytes(StandardCharsets.UTF_8)).tokens);
        for (String odd : List.of(
                "{\"token_ids\":[01]}",
                "{\"token_ids\":[1],\"token_ids\":[2]}",
                "{\"token\\u005fids\":[1]}",
                "{\"token_ids\":[1.0]}",
                "[{\"token_ids\":[1]}]")) {
            assertEquals(null, RawTokenIds.find(odd.getBytes(StandardCharsets.UTF_8)), odd);
        }
    }

    @Test
    void mangledBodiesReadExactlyAsJackson() {
        // Every single-byte deletion, and the insertion of a troublesome byte at every position, of a typical body.
        String body = "{\"model_name\":\"m\",\"token_ids\":[10,0,4294967295,7],\"lora_name\":\"a\\\"b\"}";
        assertMangledReadAsJackson(body, 0, body.length());
    }

    /** Each single-byte deletion, and the insertion of a troublesome byte, at every position in {@code [from, to)}. */
    private static void assertMangledReadAsJackson(String body, int from, int to) {
        String troublesome = "\"\\[]{},:0-.e 9";
        for (int i = from; i < to; i++) {
            assertSameAsVertx(body.substring(0, i) + body.substring(i + 1));
            for (char c : troublesome.toCharArray()) {
                assertSameAsVertx(body.substring(0, i) + c + body.substring(i));
            }
        }
    }

    @Test
    void wordAtATimeDigitsMatchTheirValues() {
        // Numbers of every length from 1 to 10 digits, in the middle of long bodies where 8-byte words are read.
        java.util.Random random = new java.util.Random(7);
        String[] separators = {",", ", ", " ,", " , ", ",\n  "};
        for (int body = 0; body < 2000; body++) {
            int n = 1 + random.nextInt(40);
            int[] expected = new int[n];
            StringBuilder json = new StringBuilder("{\"model_name\":\"m\",\"token_ids\":[");
            for (int i = 0; i < n; i++) {
                long v = random.nextInt(4) == 0
                        ? random.nextLong() & 0xFFFF_FFFFL
                        : (long) (Math.pow(10, random.nextInt(10)) * random.nextDouble());
                expected[i] = (int) v;
                json.append(i == 0 ? "" : separators[random.nextInt(separators.length)])
                        .append(v);
            }
            json.append("],\"lora_name\":null,\"padding\":\"")
                    .append("x".repeat(random.nextInt(10)))
                    .append("\"}");
            Object tokens = ((JsonObject) read(json.toString())).getValue("token_ids");
            assertTrue(tokens instanceof JsonBodyReader.PackedTokens, json.toString());
            assertArrayEquals(expected, ((JsonBodyReader.PackedTokens) tokens).tokens(), json.toString());
            assertTrue(RawTokenIds.find(json.toString().getBytes(StandardCharsets.UTF_8)) != null, json.toString());
        }
    }

    @Test
    void wordAtATimeDigitsRefuseWhatJsonRefuses() {
        String head = "{\"token_ids\":[123,";
        String tail = ",456789,7],\"model_name\":\"model-name-long-enough\"}";
        for (String odd : List.of(
                "0123",
                "00",
                "12.5",
                "1e5",
                "-5",
                "+5",
                "12a",
                "4294967296",
                "99999999999",
                "12345678901",
                "",
                " ",
                "1 2",
                "0x1F",
                "\"7\"",
                "null",
                "12345678.0",
                "1234567e1")) {
            assertSameAsVertx(head + odd + tail);
        }
        for (String ok : List.of("0", "4294967295", "12345678", "1234567", "99999999", "100000000")) {
            assertSameAsVertx(head + ok + tail);
            assertTrue(RawTokenIds.find((head + ok + tail).getBytes(StandardCharsets.UTF_8)) != null, ok);
        }
    }

    /** A body with a long token array: ids of every length, the separators clients write. */
    private static String longBody(java.util.Random random, int tokens, String before, String after) {
        String[] separators = {",", ", ", " ,", ",\n  "};
        StringBuilder json = new StringBuilder("{").append(before).append("\"token_ids\":[");
        for (int i = 0; i < tokens; i++) {
            long v = random.nextInt(8) == 0
                    ? random.nextLong() & 0xFFFF_FFFFL
                    : (long) (Math.pow(10, random.nextInt(7)) * random.nextDouble());
            json.append(i == 0 ? "" : separators[random.nextInt(separators.length)])
                    .append(v);
        }
        return json.append("]").append(after).append("}").toString();
    }

    @Test
    void longArraysMatchJackson() {
        java.util.Random random = new java.util.Random(11);
        for (int body = 0; body < 300; body++) {
            String before = random.nextBoolean() ? "" : "\"model_name\":\"m\",";
            String after = random.nextBoolean() ? "" : ",\"lora_name\":\"" + "x".repeat(random.nextInt(3000)) + "\"";
            String json = longBody(random, 1200 + random.nextInt(3000), before, after);
            assertSameAsVertx(json);
            assertTrue(RawTokenIds.find(json.getBytes(StandardCharsets.UTF_8)) != null, json);
        }
    }

    @Test
    void anArrayIsReadToItsEndWhateverFollows() {
        for (String after : List.of(
                "[4,5,6,7,8,9]", "[4,5,\"x,y\",6]", "[4,-5,6.5]", "\"a,b,c\"", "{\"token_ids\":[1,2]}", "[4,5,6")) {
            String tail = ("," + after).repeat(400);
            String json = "{\"token_ids\":[1,2,3],\"x\":[0" + tail + "]}";
            assertSameAsVertx(json);
            if (!after.endsWith("6")) {
                assertArrayEquals(
                        new int[] {1, 2, 3}, RawTokenIds.find(json.getBytes(StandardCharsets.UTF_8)).tokens, after);
            }
        }
    }

    @Test
    void shortAndLongIdsAndWhatFollowsTheArray() {
        int[] expected = new int[1800];
        StringBuilder json = new StringBuilder("{\"token_ids\":[");
        for (int i = 0; i < expected.length; i++) {
            expected[i] = i < 1500 ? i % 10 : (int) 4294967295L - i;
            json.append(i == 0 ? "" : ",").append(Integer.toUnsignedString(expected[i]));
        }
        String shortFirst = json.append("]}").toString();
        assertArrayEquals(expected, RawTokenIds.find(shortFirst.getBytes(StandardCharsets.UTF_8)).tokens);
        assertSameAsVertx(shortFirst);
        // A string of numbers and commas after the array is no part of it.
        String padded = "{\"token_ids\":[5,6,7],\"pad\":\"" + "1,".repeat(2000) + "\"}";
        assertArrayEquals(new int[] {5, 6, 7}, RawTokenIds.find(padded.getBytes(StandardCharsets.UTF_8)).tokens);
        assertSameAsVertx(padded);
    }

    @Test
    void damageInTheMiddleOfALongArrayReadsExactlyAsJackson() {
        java.util.Random random = new java.util.Random(13);
        String body = longBody(random, 800, "\"model_name\":\"m\",", ",\"lora_name\":null");
        int open = body.indexOf('[');
        int middle = open + (body.length() - open) / 2;
        assertMangledReadAsJackson(body, middle - 24, middle + 24);
    }

    @Test
    void aBodyIsReadWhereItLiesInALargerArray() {
        java.util.Random random = new java.util.Random(17);
        for (String json : List.of(
                longBody(random, 2000, "", ""),
                "{\"token_ids\":[1,2,3]}",
                "{\"token_ids\":[1,\"x\"]}",
                "{\"token_ids\":[1,2]",
                "{\"a\":[1,2,3]}")) {
            byte[] body = json.getBytes(StandardCharsets.UTF_8);
            byte[] framed = new byte[body.length + 20];
            java.util.Arrays.fill(framed, (byte) '7');
            System.arraycopy(body, 0, framed, 9, body.length);
            Object expected;
            try {
                expected = unpacked(JsonBodyReader.read(body));
            } catch (DecodeException e) {
                DecodeException framedError = assertThrows(
                        DecodeException.class, () -> JsonBodyReader.read(framed, 9, 9 + body.length), json);
                assertEquals(e.getMessage(), framedError.getMessage(), json);
                continue;
            }
            assertEquals(expected, unpacked(JsonBodyReader.read(framed, 9, 9 + body.length)), json);
        }
    }
}
