package dev.kvindexer.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses a request body into the values {@code Json.decodeValue} gives, except that a {@code token_ids} array of
 * u32 numbers comes out as {@link PackedTokens}: an 8k-token prompt is then one {@code int[]}, not 8,192 boxed
 * Integers in a JsonArray, which made JSON parsing most of a /query's cost (BENCHMARKS.md). An array with anything
 * else in it is read as usual, so the shape errors stay the same. The root object's array is read from the raw bytes
 * by {@link RawTokenIds} when it can be, and Jackson then parses only the rest.
 */
final class JsonBodyReader {
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final String TOKENS = "token_ids";
    private static final long U32_MAX = 0xFFFF_FFFFL;

    /** The token ids of a {@code token_ids} array that held only u32 numbers. */
    record PackedTokens(int[] tokens) {
    }

    private JsonBodyReader() {
    }

    /** @throws DecodeException for text that is not one JSON value */
    static Object read(byte[] body) {
        RawTokenIds raw = RawTokenIds.find(body);
        if (raw != null) {
            // The rest of the body is small; should it fail, the whole body is parsed again for the usual error.
            Object rest;
            try {
                rest = parse(raw.withoutTokens(body));
            } catch (DecodeException e) {
                rest = null;
            }
            if (rest instanceof JsonObject o && o.getValue(TOKENS) instanceof PackedTokens p && p.tokens().length == 0) {
                o.getMap().put(TOKENS, new PackedTokens(raw.tokens));
                return o;
            }
        }
        return parse(body);
    }

    /** The general path alone: Jackson for the whole body. */
    static Object parse(byte[] body) {
        try (JsonParser p = FACTORY.createParser(body)) {
            if (p.nextToken() == null) {
                throw new DecodeException("no content");
            }
            Object value = value(p);
            if (p.nextToken() != null) {
                throw new DecodeException("Unexpected trailing token " + p.currentToken());
            }
            return value;
        } catch (IOException e) {
            throw new DecodeException(e.getMessage(), e);
        }
    }

    private static Object value(JsonParser p) throws IOException {
        switch (p.currentToken()) {
            case START_OBJECT:
                return object(p);
            case START_ARRAY:
                return new JsonArray(rest(p, new ArrayList<>()));
            case VALUE_STRING:
                return p.getText();
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return p.getNumberValue();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return null;
            default:
                throw new DecodeException("Unexpected token " + p.currentToken());
        }
    }

    private static JsonObject object(JsonParser p) throws IOException {
        Map<String, Object> map = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            map.put(name, TOKENS.equals(name) && p.currentToken() == JsonToken.START_ARRAY ? tokens(p) : value(p));
        }
        return new JsonObject(map);
    }

    /** The elements of an array up to its end, after those already in {@code into}. */
    private static List<Object> rest(JsonParser p, List<Object> into) throws IOException {
        while (p.nextToken() != JsonToken.END_ARRAY) {
            into.add(value(p));
        }
        return into;
    }

    private static Object tokens(JsonParser p) throws IOException {
        int[] out = new int[64];
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
            long v = p.getLongValue();
            if (v < 0 || v > U32_MAX) {
                break;
            }
            if (n == out.length) {
                out = java.util.Arrays.copyOf(out, n * 2);
            }
            out[n++] = (int) v;
        }
        if (t == JsonToken.END_ARRAY) {
            return new PackedTokens(n == out.length ? out : java.util.Arrays.copyOf(out, n));
        }
        // Something else than a u32: read the array as usual, so the caller reports it as it always has.
        List<Object> values = new ArrayList<>(n + 16);
        for (int i = 0; i < n; i++) {
            values.add(Integer.toUnsignedLong(out[i]) > Integer.MAX_VALUE ? (Object) Integer.toUnsignedLong(out[i])
                    : (Object) out[i]);
        }
        values.add(value(p));
        return new JsonArray(rest(p, values));
    }
}
