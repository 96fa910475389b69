package dev.kvindexer.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A record's components are refused in the order they are listed, whatever order the body sends its members in, and
 * the marks for nested values ({@link Wire.Expected}, {@link Wire.Lenient}, {@link Wire.Ranks}) keep their words.
 */
class JsonBindingOrderTest {
    record Inner(@JsonProperty("id") @Wire.Required long id) {}

    record Body(
            @JsonProperty("first") @Wire.Required String first,

            @JsonProperty("inner") @Wire.Expected("a struct")
            Inner inner,

            @JsonProperty("tags") @Wire.Expected("a sequence")
            List<String> tags,

            @JsonProperty("weights") @Wire.Lenient @Wire.F32 Map<String, Double> weights,

            @JsonProperty("by_rank") @Wire.Ranks(maxChars = 3)
            Map<String, String> byRank,

            @JsonProperty("flag") Boolean flag) {}

    private static String refusal(String json) {
        return assertThrows(HttpError.class, () -> JsonBinding.bind(new JsonObject(json), Body.class))
                .getMessage()
                .replace("Failed to deserialize the JSON body into the target type: ", "");
    }

    @Test
    void firstComponentIsRefusedFirstWhateverTheBodyOrder() {
        assertEquals("missing field `first`", refusal("{\"flag\":1}"));
        assertEquals("`first`: invalid type, expected a string", refusal("{\"flag\":1,\"first\":2}"));
        assertEquals("`inner`: invalid type, expected a struct", refusal("{\"flag\":1,\"first\":\"a\",\"inner\":[]}"));
        assertEquals("missing field `id`", refusal("{\"tags\":5,\"first\":\"a\",\"inner\":{}}"));
        assertEquals("`flag`: invalid type, expected a boolean", refusal("{\"flag\":1,\"first\":\"a\"}"));
    }

    @Test
    void elementsAreNamedByTheirListOrMapAndNullIsRefused() {
        assertEquals("`tags`: invalid type, expected a sequence", refusal("{\"first\":\"a\",\"tags\":\"x\"}"));
        assertEquals("`tags`: invalid type, expected a string", refusal("{\"first\":\"a\",\"tags\":[\"x\",null]}"));
        assertEquals("`weights.w`: invalid type, expected f32", refusal("{\"first\":\"a\",\"weights\":{\"w\":\"x\"}}"));
        assertEquals(
                "`by_rank.0`: longer than 3 characters", refusal("{\"first\":\"a\",\"by_rank\":{\"0\":\"abcd\"}}"));
        assertEquals(
                "`by_rank`: invalid rank `x`, expected u32", refusal("{\"first\":\"a\",\"by_rank\":{\"x\":\"a\"}}"));
    }

    @Test
    void aLenientMemberOfAnotherKindIsAbsent() {
        Body b = JsonBinding.bind(new JsonObject("{\"first\":\"a\",\"weights\":[1]}"), Body.class);
        assertNull(b.weights());
    }
}
