package dev.kvindexer.web;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * Reads JSON request bodies with the reference's status codes (docs/api/dynamo.md#conventions): 415 for a missing or non-JSON
 * Content-Type, 400 for invalid JSON, 422 for valid JSON of the wrong shape, each naming the field.
 */
public final class JsonRequest {
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
        return v == null ? null : JsonFields.id(field, v);
    }

    /** A signed 64-bit integer, or null when absent. */
    public Long optionalI64(String field) {
        Object v = body.getValue(field);
        return v == null ? null : JsonFields.i64(field, v);
    }

    public String requiredString(String field) {
        String s = optionalString(field);
        if (s == null) {
            throw JsonFields.missing(field);
        }
        return s;
    }

    /**
     * A string member that may be left out but not sent as null, as Rust reads a non-optional string with a default:
     * null when absent.
     */
    public String stringWithDefault(String field) {
        if (body.containsKey(field) && body.getValue(field) == null) {
            throw JsonFields.nullString(field);
        }
        return optionalString(field);
    }

    /** A string member, or null when absent. */
    public String optionalString(String field) {
        Object v = body.getValue(field);
        return v == null ? null : JsonFields.text(field, v);
    }

    public long requiredU64(String field) {
        return JsonFields.u64(field, present(field));
    }

    /** A u64, or {@code defaultValue} when absent or null. */
    public long optionalU64(String field, long defaultValue) {
        Object v = body.getValue(field);
        return v == null ? defaultValue : JsonFields.u64(field, v);
    }

    /** A required u32 over its whole range (ids and ranks that may exceed a signed int). */
    public long requiredU32Long(String field) {
        return JsonFields.u32Wide(field, present(field));
    }

    public int requiredU32(String field) {
        return JsonFields.u32(field, present(field));
    }

    /** A u32 that fits a non-negative int (ranks, block sizes); larger values are out of range for us. */
    public int optionalU32(String field, int defaultValue) {
        Object v = body.getValue(field);
        return v == null ? defaultValue : JsonFields.u32(field, v);
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
            out[i] = JsonFields.token(field, i, arr.getValue(i));
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
            out[i] = JsonFields.signedHash(field, i, arr.getValue(i));
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
            out[i] = JsonFields.hash(field, i, arr.getValue(i), strings);
        }
        return out;
    }

    private Object present(String field) {
        Object v = body.getValue(field);
        if (v == null) {
            throw JsonFields.missing(field);
        }
        return v;
    }

    private JsonArray requiredArray(String field) {
        Object v = present(field);
        if (!(v instanceof JsonArray array)) {
            throw JsonFields.notAnArray(field);
        }
        return array;
    }
}
