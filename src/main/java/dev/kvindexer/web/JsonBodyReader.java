package dev.kvindexer.web;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Parses a request body into the values {@code Json.decodeValue} gives, except that a {@code token_ids} array of
 * u32 numbers comes out as {@link PackedTokens}: an 8k-token prompt is then one {@code int[]}, not 8,192 boxed
 * Integers in a JsonArray, which made JSON parsing most of a /query's cost (BENCHMARKS.md). An array with anything
 * else in it is read as usual, so the shape errors stay the same. The root object's array is read from the raw bytes
 * by {@link RawTokenIds} when it can be, and Jackson then parses only the rest.
 */
public final class JsonBodyReader {
    /**
     * How deep arrays and objects may nest in a request body, JSON or msgpack: Jackson's default bound, which JSON
     * bodies have always had, so that both encodings refuse the same documents and neither recursion nears the
     * stack's end.
     */
    public static final int MAX_NESTING_DEPTH = StreamReadConstraints.DEFAULT_MAX_DEPTH;

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(MAX_NESTING_DEPTH)
                    .build())
            .build();
    private static final String TOKENS = "token_ids";
    private static final long U32_MAX = 0xFFFF_FFFFL;

    /** The token ids of a {@code token_ids} array that held only u32 numbers. */
    public record PackedTokens(int[] tokens) {}

    private JsonBodyReader() {}

    /** @throws DecodeException for text that is not one JSON value */
    public static Object read(byte[] body) {
        return read(body, 0, body.length);
    }

    /**
     * The body {@code b[from, to)}, read where it lies (a request's buffer) rather than copied out first.
     *
     * @throws DecodeException for text that is not one JSON value
     */
    public static Object read(byte[] b, int from, int to) {
        RawTokenIds raw = RawTokenIds.find(b, from, to);
        if (raw != null) {
            // The rest of the body is small; should it fail, the whole body is parsed again for the usual error.
            Object rest;
            try {
                rest = parse(raw.withoutTokens(b, from, to));
            } catch (DecodeException e) {
                rest = null;
            }
            if (rest instanceof JsonObject o
                    && o.getValue(TOKENS) instanceof PackedTokens p
                    && p.tokens().length == 0) {
                o.getMap().put(TOKENS, new PackedTokens(raw.tokens));
                return o;
            }
        }
        return parse(b, from, to - from);
    }

    /** The general path alone: Jackson for the whole body. */
    static Object parse(byte[] body) {
        return parse(body, 0, body.length);
    }

    /** The general path for the body in {@code b[offset, offset + length)}, read where it lies. */
    private static Object parse(byte[] b, int offset, int length) {
        try (JsonParser p = FACTORY.createParser(b, offset, length)) {
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

    /** The value that starts at the current token, read to its end. */
    private static Object value(JsonParser p) throws IOException {
        Deque<BodyContainer> open = new ArrayDeque<>();
        JsonToken t = p.currentToken();
        while (true) {
            Object value;
            if (t == null) {
                throw new DecodeException("Unexpected end of input");
            } else if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                open.push(new BodyContainer(t == JsonToken.START_OBJECT, 16));
                t = p.nextToken();
                continue;
            } else if (t == JsonToken.FIELD_NAME) {
                BodyContainer object = open.element();
                object.key = text(p.currentName());
                t = p.nextToken();
                if (!TOKENS.equals(object.key) || t != JsonToken.START_ARRAY) {
                    continue;
                }
                List<Object> read = new ArrayList<>();
                value = tokens(p, read);
                if (value == null) {
                    // Something else than a u32: the array is read as usual from here, so errors stay the same.
                    open.push(new BodyContainer(read));
                    t = p.currentToken();
                    continue;
                }
            } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                value = open.pop().value();
            } else {
                value = scalar(p, t);
            }
            BodyContainer parent = open.peek();
            if (parent == null) {
                return value;
            }
            parent.add(value);
            t = p.nextToken();
        }
    }

    /**
     * A string as JSON spelled it, refused when an escape left a lone UTF-16 surrogate in it, which is no Unicode text
     * (it could not be written as UTF-8 into logs, labels or a peer's dump). The reference's parser refuses such a
     * body as a syntax error, with this wording.
     */
    private static String text(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new DecodeException("lone leading surrogate in hex escape");
            }
        }
        return s;
    }

    private static Object scalar(JsonParser p, JsonToken t) throws IOException {
        return switch (t) {
            case VALUE_STRING -> text(p.getText());
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> p.getNumberValue();
            case VALUE_TRUE -> Boolean.TRUE;
            case VALUE_FALSE -> Boolean.FALSE;
            case VALUE_NULL -> null;
            default -> throw new DecodeException("Unexpected token " + t);
        };
    }

    /**
     * The u32 numbers of the array whose start is the current token, packed; or null when some element is anything
     * else, with the numbers before it added to {@code readSoFar} and that element the current token.
     */
    private static PackedTokens tokens(JsonParser p, List<Object> readSoFar) throws IOException {
        int[] out = new int[64];
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.VALUE_NUMBER_INT
                && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
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
        for (int i = 0; i < n; i++) {
            readSoFar.add(
                    Integer.toUnsignedLong(out[i]) > Integer.MAX_VALUE
                            ? (Object) Integer.toUnsignedLong(out[i])
                            : (Object) out[i]);
        }
        return null;
    }
}
