package dev.kvindexer.web;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Records bind through JsonFields' rules: absent, null and wrong members refused in the same words as by hand. */
class JsonBindingTest {
    record Sample(
            @JsonProperty("name") @Wire.Required String name,
            @JsonProperty("group") @Wire.NullRefused String group,
            @JsonProperty("id") @Wire.Id String id,
            @JsonProperty("worker") long worker,
            @JsonProperty("rank") int rank,
            @JsonProperty("size") Integer size,
            @JsonProperty("signed") @Wire.Signed Long signed,
            @JsonProperty("wide") @Wire.U32 long wide,
            @JsonProperty("token_ids") int[] tokens,
            @JsonProperty("hashes") long[] hashes,
            @JsonProperty("seq") @Wire.DecimalText long[] seq,
            @JsonProperty("block_hashes") @Wire.Signed long[] blockHashes) {}

    record Outer(
            @JsonProperty("inner") Inner inner,
            @JsonProperty("list") List<Inner> list) {}

    record Inner(@JsonProperty("worker_id") @Wire.Required long workerId) {
        Inner {
            if (workerId == 7) {
                throw new HttpError(400, "seven is refused");
            }
        }
    }

    private static <T> T bind(String json, Class<T> type) {
        return JsonBinding.bind((JsonObject) JsonBodyReader.read(json.getBytes(StandardCharsets.UTF_8)), type);
    }

    private static String refusal(String json, Class<?> type) {
        HttpError e = assertThrows(HttpError.class, () -> bind(json, type));
        return e.status() + " "
                + e.getMessage().replace("Failed to deserialize the JSON body into the target type: ", "");
    }

    @Test
    void everyKindReadsItsValueAndAbsentMembersTakeTheirDefaults() {
        Sample s = bind(
                "{\"name\":\"m\",\"id\":18446744073709551615,\"worker\":18446744073709551615,\"rank\":3,"
                        + "\"signed\":-5,\"wide\":4294967295,\"token_ids\":[1,4294967295],"
                        + "\"hashes\":[-1,18446744073709551615],\"seq\":[\" 12 \",-3],\"block_hashes\":[-9],\"x\":{}}",
                Sample.class);
        assertEquals("m", s.name());
        assertNull(s.group());
        assertEquals("18446744073709551615", s.id());
        assertEquals(-1L, s.worker());
        assertEquals(3, s.rank());
        assertNull(s.size());
        assertEquals(-5L, s.signed());
        assertEquals(4294967295L, s.wide());
        assertArrayEquals(new int[] {1, -1}, s.tokens());
        assertArrayEquals(new long[] {-1, -1}, s.hashes());
        assertArrayEquals(new long[] {12, -3}, s.seq());
        assertArrayEquals(new long[] {-9}, s.blockHashes());

        Sample bare = bind("{\"name\":\"m\",\"rank\":null,\"worker\":null}", Sample.class);
        assertEquals(0, bare.rank());
        assertEquals(0L, bare.worker());
        assertNull(bare.tokens());
    }

    @Test
    void aPackedTokenArrayIsBoundWithoutACopy() {
        JsonObject body = (JsonObject) JsonBodyReader.read("{\"name\":\"m\",\"token_ids\":[5,6,7]}".getBytes());
        int[] packed = ((JsonBodyReader.PackedTokens) body.getValue("token_ids")).tokens();
        assertSame(packed, JsonBinding.bind(body, Sample.class).tokens());
    }

    @Test
    void refusalsNameTheFieldInTheHandReadersWords() {
        assertEquals("422 missing field `name`", refusal("{}", Sample.class));
        assertEquals("422 missing field `name`", refusal("{\"name\":null}", Sample.class));
        assertEquals("422 `name`: invalid type, expected a string", refusal("{\"name\":1}", Sample.class));
        assertEquals(
                "422 `group`: invalid type: null, expected a string",
                refusal("{\"name\":\"m\",\"group\":null}", Sample.class));
        assertEquals(
                "422 `worker`: invalid value -1, expected u64",
                refusal("{\"name\":\"m\",\"worker\":-1}", Sample.class));
        assertEquals(
                "422 `worker`: invalid type, expected u64", refusal("{\"name\":\"m\",\"worker\":[1]}", Sample.class));
        assertEquals(
                "422 `rank`: value 4294967295 is too large",
                refusal("{\"name\":\"m\",\"rank\":4294967295}", Sample.class));
        assertEquals(
                "422 `rank`: invalid type, expected an unsigned integer",
                refusal("{\"name\":\"m\",\"rank\":1.5}", Sample.class));
        assertEquals(
                "422 `signed`: invalid type, expected an integer",
                refusal("{\"name\":\"m\",\"signed\":\"1\"}", Sample.class));
        assertEquals(
                "422 `wide`: invalid value 4294967296, expected u32",
                refusal("{\"name\":\"m\",\"wide\":4294967296}", Sample.class));
        assertEquals(
                "422 `token_ids[1]`: invalid value -2, expected u32",
                refusal("{\"name\":\"m\",\"token_ids\":[1,-2]}", Sample.class));
        assertEquals(
                "422 `token_ids`: invalid type, expected an array",
                refusal("{\"name\":\"m\",\"token_ids\":\"1\"}", Sample.class));
        assertEquals(
                "422 `hashes[0]`: invalid value (an object), expected i64",
                refusal("{\"name\":\"m\",\"hashes\":[{\"a\":1}]}", Sample.class));
        assertEquals(
                "422 `seq[0]`: invalid value \"x\", expected a u64",
                refusal("{\"name\":\"m\",\"seq\":[\"x\"]}", Sample.class));
        assertEquals(
                "422 block_hashes[0]: invalid type: string \"1\", expected i64",
                refusal("{\"name\":\"m\",\"block_hashes\":[\"1\"]}", Sample.class));
    }

    @Test
    void nestedRecordsBindAndTheirConstructorsRefuseAsThemselves() {
        Outer o = bind("{\"inner\":{\"worker_id\":1},\"list\":[{\"worker_id\":2}]}", Outer.class);
        assertEquals(1L, o.inner().workerId());
        assertEquals(2L, o.list().get(0).workerId());
        assertEquals("400 seven is refused", refusal("{\"inner\":{\"worker_id\":7}}", Outer.class));
        assertEquals("422 missing field `worker_id`", refusal("{\"list\":[{}]}", Outer.class));
        assertEquals("422 `inner`: invalid type, expected an object", refusal("{\"inner\":\"x\"}", Outer.class));
        assertEquals(
                "422 `list[1]`: invalid type, expected an object",
                refusal("{\"list\":[{\"worker_id\":1},2]}", Outer.class));
    }

    record Answer(
            long workerId,
            @Wire.Signed long hash,
            Long missing,
            @JsonProperty("instance_name") String name) {}

    @Test
    void answersAreWrittenSnakeCaseInDeclaredOrderWithIdsUnsigned() {
        assertEquals(
                "[{\"worker_id\":18446744073709551615,\"hash\":-1,\"missing\":null,\"instance_name\":\"a\"}]",
                JsonBinding.encode(List.of(new Answer(-1L, -1L, null, "a"))).toString());
        assertEquals(
                "{\"worker_id\":7,\"hash\":7,\"missing\":8,\"instance_name\":null}",
                JsonBinding.encode(new Answer(7, 7, 8L, null)).toString());
    }

    record Echo(@JsonProperty("opaque") Object opaque) {}

    /** A member of no particular shape is taken as parsed, not read again level by level on the thread's stack. */
    @Test
    void aDeepMemberOfNoShapeBindsOnASmallStack() throws Exception {
        String json = "{\"opaque\":" + "[".repeat(990) + "1" + "]".repeat(990) + "}";
        JsonObject body = (JsonObject) JsonBodyReader.read(json.getBytes(StandardCharsets.UTF_8));
        Object[] bound = new Object[1];
        Throwable[] failed = new Throwable[1];
        Thread small = new Thread(
                null,
                () -> {
                    try {
                        bound[0] = JsonBinding.bind(body, Echo.class).opaque();
                    } catch (Throwable t) {
                        failed[0] = t;
                    }
                },
                "small-stack",
                128 * 1024);
        small.start();
        small.join();
        assertNull(failed[0]);
        assertSame(body.getJsonArray("opaque").getList(), bound[0]);
    }

    /** A member echoed as sent keeps a nested {@code token_ids} array an array, though the parser packed it. */
    @Test
    void anEchoedMemberIsWrittenBackAsItWasSent() {
        String sent = "{\"a\":[1,{\"token_ids\":[1,4294967295]}],\"b\":null}";
        Echo echo = bind("{\"opaque\":" + sent + "}", Echo.class);
        assertEquals("{\"opaque\":" + sent + "}", JsonBinding.encode(echo).toString());
    }
}
