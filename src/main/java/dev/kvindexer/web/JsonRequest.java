package dev.kvindexer.web;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * Parses a request body once, JSON or msgpack, for the routes to bind ({@link JsonBinding}) and flavor dispatch to
 * look at, with the reference's status codes (docs/api/dynamo.md#conventions): 415 for a missing or non-JSON
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

    /** The parsed object: what {@link JsonBinding} binds, and what flavor dispatch looks at. */
    public JsonObject body() {
        return body;
    }

    /** Present and not null: for telling flavors apart by the members they send. */
    public boolean has(String field) {
        return body.getValue(field) != null;
    }

    public boolean isString(String field) {
        return body.getValue(field) instanceof String;
    }
}
