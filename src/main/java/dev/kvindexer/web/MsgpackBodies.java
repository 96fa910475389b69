package dev.kvindexer.web;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.math.BigInteger;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * msgpack bodies of the C++ Conductor generation (docs/api/mooncake-cpp.md#common-rules): a msgpack map is read as the JSON object with the same
 * members ({@link MsgpackBodyReader}), and the JSON answer goes back as msgpack in the request's own content type. So
 * every Mooncake route, check and error is the JSON one. {@code token_ids} may be a {@code bin} of little-endian u32s
 * (the C++ motivation: "4 bytes per token, no per-element parsing"); any bin value is read that way.
 */
public final class MsgpackBodies {
    /** The content type a response is written in; set for a msgpack request or an Accept that asks for msgpack. */
    private static final String RESPONSE_TYPE = "kvindexer.msgpack-response";

    private MsgpackBodies() {}

    /** application/msgpack, application/x-msgpack or application/vnd.msgpack, ignoring parameters. */
    public static boolean isMsgpackType(String header) {
        String mime = JsonRequest.mediaType(header);
        return "application/msgpack".equals(mime)
                || "application/x-msgpack".equals(mime)
                || "application/vnd.msgpack".equals(mime);
    }

    /** Answers this request in msgpack, in the media type of {@code header} (the request's Content-Type or Accept). */
    public static void answerIn(RoutingContext ctx, String header) {
        ctx.put(RESPONSE_TYPE, JsonRequest.mediaType(header));
    }

    /** The msgpack type to answer in, or null for JSON. */
    public static String responseType(RoutingContext ctx) {
        return ctx.get(RESPONSE_TYPE);
    }

    public static boolean isMsgpackRequest(RoutingContext ctx) {
        return isMsgpackType(ctx.request().getHeader("content-type"));
    }

    /**
     * Whether a request asks for a msgpack answer: its Accept or its Content-Type names msgpack (a C++ Conductor
     * client may set its msgpack Content-Type on bodiless GETs too).
     */
    public static boolean asksForMsgpack(RoutingContext ctx) {
        return isMsgpackType(ctx.request().getHeader("accept")) || isMsgpackRequest(ctx);
    }

    /** The body as the JSON value it stands for; 400 when it is not one whole msgpack value. */
    public static Object decode(Buffer body) {
        return MsgpackBodyReader.read(body.getBytes());
    }

    /** A JSON document (our answers are small) as msgpack with the same structure. */
    public static Buffer encode(String json) {
        try (MessageBufferPacker out = MessagePack.newDefaultBufferPacker()) {
            pack(out, json.isEmpty() ? null : Json.decodeValue(json));
            return Buffer.buffer(out.toByteArray());
        } catch (IOException e) {
            throw new IllegalStateException("cannot write msgpack", e);
        }
    }

    private static void pack(MessageBufferPacker out, Object v) throws IOException {
        if (v == null) {
            out.packNil();
        } else if (v instanceof JsonObject o) {
            out.packMapHeader(o.size());
            for (Map.Entry<String, Object> e : o) {
                out.packString(e.getKey());
                pack(out, e.getValue());
            }
        } else if (v instanceof JsonArray a) {
            out.packArrayHeader(a.size());
            for (Object e : a) {
                pack(out, e);
            }
        } else if (v instanceof String s) {
            out.packString(s);
        } else if (v instanceof Boolean b) {
            out.packBoolean(b);
        } else if (v instanceof BigInteger b) {
            out.packBigInteger(b);
        } else if (v instanceof Double || v instanceof Float) {
            out.packDouble(((Number) v).doubleValue());
        } else if (v instanceof Number n) {
            out.packLong(n.longValue());
        } else {
            throw new IllegalArgumentException("no msgpack form for " + v.getClass());
        }
    }
}
