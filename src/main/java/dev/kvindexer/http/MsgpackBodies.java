package dev.kvindexer.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ImmutableValue;
import org.msgpack.value.IntegerValue;
import org.msgpack.value.Value;

/**
 * msgpack bodies of the C++ Conductor generation (SPEC §8.6): a msgpack map is read as the JSON object with the same
 * members, and the JSON answer goes back as msgpack in the request's own content type. So every Mooncake route,
 * check and error is the JSON one. {@code token_ids} may be a {@code bin} of little-endian u32s (the C++ motivation:
 * "4 bytes per token, no per-element parsing"); any bin value is read that way.
 */
final class MsgpackBodies {
    /** The content type a response is written in; set for a msgpack request or an Accept that asks for msgpack. */
    private static final String RESPONSE_TYPE = "kvindexer.msgpack-response";

    private MsgpackBodies() {
    }

    /** application/msgpack, application/x-msgpack or application/vnd.msgpack, ignoring parameters. */
    static boolean isMsgpackType(String header) {
        String mime = JsonRequest.mediaType(header);
        return "application/msgpack".equals(mime) || "application/x-msgpack".equals(mime)
                || "application/vnd.msgpack".equals(mime);
    }

    /** Answers this request in msgpack, in the media type of {@code header} (the request's Content-Type or Accept). */
    static void answerIn(RoutingContext ctx, String header) {
        ctx.put(RESPONSE_TYPE, JsonRequest.mediaType(header));
    }

    /** The msgpack type to answer in, or null for JSON. */
    static String responseType(RoutingContext ctx) {
        return ctx.get(RESPONSE_TYPE);
    }

    static boolean isMsgpackRequest(RoutingContext ctx) {
        return isMsgpackType(ctx.request().getHeader("content-type"));
    }

    /** The body as the JSON value it stands for; 400 when it is not one whole msgpack value. */
    static Object decode(Buffer body) {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(body.getBytes())) {
            ImmutableValue v = in.unpackValue();
            if (in.hasNext()) {
                throw new HttpError(400, "Failed to parse the request body as msgpack: trailing bytes after the value");
            }
            return toJson(v, "body");
        } catch (IOException | RuntimeException e) {
            if (e instanceof HttpError) {
                throw (HttpError) e;
            }
            throw new HttpError(400, "Failed to parse the request body as msgpack: " + e.getMessage());
        }
    }

    private static Object toJson(Value v, String where) {
        switch (v.getValueType()) {
            case NIL:
                return null;
            case BOOLEAN:
                return v.asBooleanValue().getBoolean();
            case INTEGER: {
                IntegerValue i = v.asIntegerValue();
                return i.isInLongRange() ? (Object) i.toLong() : i.toBigInteger();
            }
            case FLOAT:
                return v.asFloatValue().toDouble();
            case STRING:
                return v.asStringValue().asString();
            case BINARY:
                return u32LittleEndian(v.asBinaryValue().asByteArray(), where);
            case ARRAY: {
                JsonArray out = new JsonArray();
                int i = 0;
                for (Value e : v.asArrayValue()) {
                    out.add(toJson(e, where + "[" + i++ + "]"));
                }
                return out;
            }
            case MAP: {
                JsonObject out = new JsonObject();
                for (Map.Entry<Value, Value> e : v.asMapValue().entrySet()) {
                    if (!e.getKey().isStringValue()) {
                        throw new HttpError(400, "Failed to parse the request body as msgpack: a key of `" + where
                                + "` is not a string");
                    }
                    String key = e.getKey().asStringValue().asString();
                    out.put(key, toJson(e.getValue(), key));
                }
                return out;
            }
            default:
                throw new HttpError(400, "Failed to parse the request body as msgpack: `" + where
                        + "` is an extension value");
        }
    }

    /** {@code token_ids} come out packed (an int[], as JsonBodyReader gives them); any other bin as a JsonArray. */
    private static Object u32LittleEndian(byte[] bytes, String where) {
        if (bytes.length % 4 != 0) {
            throw HttpError.shape("`" + where + "`: a bin of u32 values needs a multiple of 4 bytes, got " + bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (where.equals("token_ids")) {
            int[] tokens = new int[bytes.length / 4];
            b.asIntBuffer().get(tokens);
            return new JsonBodyReader.PackedTokens(tokens);
        }
        JsonArray out = new JsonArray();
        while (b.hasRemaining()) {
            out.add(Integer.toUnsignedLong(b.getInt()));
        }
        return out;
    }

    /** A JSON document (our answers are small) as msgpack with the same structure. */
    static Buffer encode(String json) {
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
