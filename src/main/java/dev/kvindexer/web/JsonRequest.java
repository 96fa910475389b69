package dev.kvindexer.web;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.math.BigInteger;

/**
 * Reads JSON request bodies with the reference's status codes (docs/api/dynamo.md#conventions): 415 for a missing or non-JSON
 * Content-Type, 400 for invalid JSON, 422 for valid JSON of the wrong shape, each naming the field.
 */
public final class JsonRequest {
    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    private static final long U32_MAX = 0xFFFF_FFFFL;

    private static final String CONTEXT_KEY = "kvindexer.json-body";

    private final JsonObject body;

    private JsonRequest(JsonObject body) {
        this.body = body;
    }

    /** True for application/json and application/*+json, ignoring parameters such as charset. */
    public static boolean isJsonContentType(String header) {
        String mime = mediaType(header);
        return mime != null
                && (mime.equals("application/json") || (mime.startsWith("application/") && mime.endsWith("+json")));
    }

    /**
     * The media type of a Content-Type or the first of an Accept header, lower case, without parameters; null for no
     * header.
     */
    public static String mediaType(String header) {
        if (header == null) {
            return null;
        }
        int end = header.length();
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c == ';' || c == ',') {
                end = i;
                break;
            }
        }
        return header.substring(0, end).trim().toLowerCase(java.util.Locale.ROOT);
    }

    /** The body parsed once per request: flavor dispatch reads it, then the handler does. */
    public static JsonRequest of(RoutingContext ctx) {
        JsonRequest cached = ctx.get(CONTEXT_KEY);
        if (cached == null) {
            cached = parse(ctx);
            ctx.put(CONTEXT_KEY, cached);
        }
        return cached;
    }

    private static JsonRequest parse(RoutingContext ctx) {
        Buffer buffer = ctx.body().buffer();
        boolean msgpack = MsgpackBodies.isMsgpackRequest(ctx);
        if (buffer == null || buffer.length() == 0) {
            throw new HttpError(
                    400, "Failed to parse the request body as " + (msgpack ? "msgpack" : "JSON") + ": empty body");
        }
        Object value;
        if (msgpack) {
            value = MsgpackBodies.decode(buffer);
        } else
            try {
                value = readJson(buffer);
            } catch (DecodeException e) {
                throw new HttpError(400, "Failed to parse the request body as JSON: " + firstLine(e.getMessage()));
            }
        if (!(value instanceof JsonObject object)) {
            throw HttpError.shape("expected a JSON object");
        }
        return new JsonRequest(object);
    }

    /**
     * Reads the body from the array under the request's buffer when it has one (the body handler gathers into a heap
     * buffer), rather than from a copy of it: a long prompt's body would otherwise be copied once more per query.
     */
    private static Object readJson(Buffer buffer) {
        if (buffer instanceof BufferInternal internal) {
            ByteBuf bytes = internal.getByteBuf();
            if (bytes.hasArray()) {
                int from = bytes.arrayOffset() + bytes.readerIndex();
                return JsonBodyReader.read(bytes.array(), from, from + bytes.readableBytes());
            }
        }
        return JsonBodyReader.read(buffer.getBytes());
    }

    /**
     * The model a request named (Dynamo {@code model_name}, Mooncake {@code model} or {@code modelname}, or the
     * {@code model_name} query parameter), for the access log; null when none, or the body was never read or valid.
     */
    public static String modelOf(RoutingContext ctx) {
        JsonRequest cached = ctx.get(CONTEXT_KEY);
        if (cached != null) {
            for (String key : new String[] {"model_name", "model", "modelname"}) {
                if (cached.body.getValue(key) instanceof String) {
                    return cached.body.getString(key);
                }
            }
        }
        return ctx.queryParams().get("model_name");
    }

    /** A JSON object nested in a request body (one element of an array member), read with the same rules. */
    public static JsonRequest of(JsonObject object) {
        return new JsonRequest(object);
    }

    /** The JSON objects of an array member; null when the member is absent. */
    public java.util.List<JsonObject> optionalObjects(String field) {
        Object v = body.getValue(field);
        if (v == null) {
            return null;
        }
        if (!(v instanceof JsonArray arr)) {
            throw HttpError.shape("`" + field + "`: invalid type, expected an array");
        }
        java.util.List<JsonObject> out = new java.util.ArrayList<>(arr.size());
        for (int i = 0; i < arr.size(); i++) {
            if (!(arr.getValue(i) instanceof JsonObject)) {
                throw HttpError.shape("`" + field + "[" + i + "]`: invalid type, expected an object");
            }
            out.add(arr.getJsonObject(i));
        }
        return out;
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "syntax error";
        }
        // Jackson appends source locations and markers that mean nothing to a client.
        for (String cut : new String[] {"\n", " (start marker", " at [Source"}) {
            int i = s.indexOf(cut);
            if (i >= 0) {
                s = s.substring(0, i);
            }
        }
        return s;
    }

    /** Present and not null. */
    /** The parsed object, for members whose shape only the caller knows. */
    public JsonObject body() {
        return body;
    }

    public boolean has(String field) {
        return body.getValue(field) != null;
    }

    public boolean isString(String field) {
        return body.getValue(field) instanceof String;
    }

    /** A string id, or an integer given in its place (Mooncake accepts both for instance_id); null when absent. */
    public String optionalId(String field) {
        Object v = body.getValue(field);
        if (v == null || v instanceof String) {
            return optionalString(field);
        }
        if (v instanceof Integer || v instanceof Long || v instanceof BigInteger) {
            return Long.toUnsignedString(u64(field, v));
        }
        throw HttpError.shape("`" + field + "`: invalid type, expected a string");
    }

    /** A signed 64-bit integer, or null when absent. */
    public Long optionalI64(String field) {
        Object v = body.getValue(field);
        if (v == null) {
            return null;
        }
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        throw HttpError.shape("`" + field + "`: invalid type, expected an integer");
    }

    public String requiredString(String field) {
        String s = optionalString(field);
        if (s == null) {
            throw HttpError.shape("missing field `" + field + "`");
        }
        return s;
    }

    /**
     * A string member that may be left out but not sent as null, as Rust reads a non-optional string with a default:
     * null when absent.
     */
    public String stringWithDefault(String field) {
        if (body.containsKey(field) && body.getValue(field) == null) {
            throw HttpError.shape("`" + field + "`: invalid type: null, expected a string");
        }
        return optionalString(field);
    }

    /** A string member, or null when absent. */
    public String optionalString(String field) {
        Object v = body.getValue(field);
        if (v == null) {
            return null;
        }
        if (!(v instanceof String s)) {
            throw HttpError.shape("`" + field + "`: invalid type, expected a string");
        }
        return s;
    }

    public long requiredU64(String field) {
        Object v = body.getValue(field);
        if (v == null) {
            throw HttpError.shape("missing field `" + field + "`");
        }
        return u64(field, v);
    }

    /** A u64, or {@code defaultValue} when absent or null. */
    public long optionalU64(String field, long defaultValue) {
        Object v = body.getValue(field);
        return v == null ? defaultValue : u64(field, v);
    }

    /** A required u32 over its whole range (ids and ranks that may exceed a signed int). */
    public long requiredU32Long(String field) {
        long n = requiredU64(field);
        if (n < 0 || n > U32_MAX) {
            throw HttpError.shape("`" + field + "`: invalid value " + Long.toUnsignedString(n) + ", expected u32");
        }
        return n;
    }

    public int requiredU32(String field) {
        if (!has(field)) {
            throw HttpError.shape("missing field `" + field + "`");
        }
        return optionalU32(field, 0);
    }

    /** A u32 that fits a non-negative int (ranks, block sizes); larger values are out of range for us. */
    public int optionalU32(String field, int defaultValue) {
        Object v = body.getValue(field);
        if (v == null) {
            return defaultValue;
        }
        long n = integral(field, v);
        if (n < 0 || n > U32_MAX) {
            throw HttpError.shape("`" + field + "`: invalid value " + v + ", expected u32");
        }
        if (n > Integer.MAX_VALUE) {
            throw HttpError.shape("`" + field + "`: value " + v + " is too large");
        }
        return (int) n;
    }

    public Integer optionalRank(String field) {
        return has(field) ? optionalU32(field, 0) : null;
    }

    /** An array of u32 token ids, kept as int bit patterns. */
    public int[] u32Array(String field) {
        if (body.getValue(field) instanceof JsonBodyReader.PackedTokens packed) {
            return packed.tokens();
        }
        JsonArray arr = requiredArray(field);
        int[] out = new int[arr.size()];
        for (int i = 0; i < out.length; i++) {
            Object v = arr.getValue(i);
            if (!(v instanceof Integer || v instanceof Long)) {
                throw HttpError.shape("`" + field + "[" + i + "]`: invalid type, expected u32");
            }
            long n = ((Number) v).longValue();
            if (n < 0 || n > U32_MAX) {
                throw HttpError.shape("`" + field + "[" + i + "]`: invalid value " + n + ", expected u32");
            }
            out[i] = (int) n;
        }
        return out;
    }

    /** An array of 64-bit hashes: signed i64 as the reference sends them, unsigned values above 2^63 accepted too. */
    public long[] hashArray(String field) {
        return hashes(field, false);
    }

    /** Signed 64-bit integers only, as Dynamo's {@code Vec<i64>} reads them: a larger number is a shape error. */
    public long[] i64Array(String field) {
        JsonArray arr = requiredArray(field);
        long[] out = new long[arr.size()];
        for (int i = 0; i < out.length; i++) {
            Object v = arr.getValue(i);
            if (!(v instanceof Integer) && !(v instanceof Long)) {
                throw HttpError.shape(field + "[" + i + "]: " + serdeUnexpected(v) + ", expected i64" + signedHint(v));
            }
            out[i] = ((Number) v).longValue();
        }
        return out;
    }

    /**
     * Mooncake's {@code seq_hashes}: u64 numbers, negative numbers taken as their 64-bit pattern, or decimal strings
     * (older drafts), each a rolling sequence hash.
     */
    public long[] u64OrStringArray(String field) {
        return hashes(field, true);
    }

    private long[] hashes(String field, boolean strings) {
        JsonArray arr = requiredArray(field);
        long[] out = new long[arr.size()];
        for (int i = 0; i < out.length; i++) {
            Object v = arr.getValue(i);
            if (v instanceof Integer || v instanceof Long) {
                out[i] = ((Number) v).longValue();
            } else if (v instanceof BigInteger big && big.signum() > 0 && big.compareTo(U64_MAX) <= 0) {
                out[i] = big.longValue();
            } else if (strings && v instanceof String text) {
                out[i] = decimal(field, i, text.trim());
            } else {
                throw HttpError.shape("`" + field + "[" + i + "]`: invalid value " + shown(v) + ", expected "
                        + (strings ? "a u64" : "i64"));
            }
        }
        return out;
    }

    /** What serde says of a JSON value a number type cannot take, e.g. {@code invalid type: string "1"}. */
    /**
     * After Dynamo's own text, for a u64 hash above 2^63 − 1: the same 64 bits as the signed i64 the route reads, as
     * engines and routers that print hashes unsigned would otherwise not know what to send.
     */
    private static String signedHint(Object v) {
        if (v instanceof BigInteger b && b.signum() > 0 && b.compareTo(U64_MAX) <= 0) {
            return " (a hash above 9223372036854775807 is sent as its signed 64-bit value: " + b.longValue() + ")";
        }
        return "";
    }

    private static String serdeUnexpected(Object v) {
        if (v instanceof BigInteger b) {
            return "invalid value: integer `" + b + "`";
        }
        if (v instanceof Number n) {
            return "invalid type: floating point `" + n + "`";
        }
        if (v instanceof String str) {
            return "invalid type: string "
                    + io.vertx.core.json.Json.encode(str.length() > 64 ? str.substring(0, 64) : str);
        }
        if (v instanceof Boolean b) {
            return "invalid type: boolean `" + b + "`";
        }
        return v == null
                ? "invalid type: null"
                : v instanceof JsonArray ? "invalid type: sequence" : "invalid type: map";
    }

    /**
     * An element as an error shows it: an array or object by its kind, since its text may be as large as the body and
     * as deep as the nesting bound.
     */
    private static String shown(Object v) {
        return v instanceof JsonArray ? "(an array)" : v instanceof JsonObject ? "(an object)" : String.valueOf(v);
    }

    private static long decimal(String field, int i, String s) {
        try {
            return s.startsWith("-") ? Long.parseLong(s) : Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw HttpError.shape("`" + field + "[" + i + "]`: invalid value \"" + s + "\", expected a u64");
        }
    }

    private JsonArray requiredArray(String field) {
        Object v = body.getValue(field);
        if (v == null) {
            throw HttpError.shape("missing field `" + field + "`");
        }
        if (!(v instanceof JsonArray array)) {
            throw HttpError.shape("`" + field + "`: invalid type, expected an array");
        }
        return array;
    }

    private static long u64(String field, Object v) {
        if (v instanceof Integer || v instanceof Long) {
            long n = ((Number) v).longValue();
            if (n < 0) {
                throw HttpError.shape("`" + field + "`: invalid value " + n + ", expected u64");
            }
            return n;
        }
        if (v instanceof BigInteger b) {
            if (b.signum() < 0 || b.compareTo(U64_MAX) > 0) {
                throw HttpError.shape("`" + field + "`: invalid value " + b + ", expected u64");
            }
            return b.longValue();
        }
        throw HttpError.shape("`" + field + "`: invalid type, expected u64");
    }

    private static long integral(String field, Object v) {
        if (v instanceof Integer || v instanceof Long) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigInteger big) {
            return big.signum() < 0 ? -1 : Long.MAX_VALUE;
        }
        throw HttpError.shape("`" + field + "`: invalid type, expected an unsigned integer");
    }
}
