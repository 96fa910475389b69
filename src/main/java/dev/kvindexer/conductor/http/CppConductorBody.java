package dev.kvindexer.conductor.http;

import dev.kvindexer.wire.MsgpackValues;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;

/**
 * A C++ Mooncake Conductor request body (docs/api/mooncake-cpp.md#common-rules): the first msgpack value, which must be a map. Trailing bytes
 * are ignored, as msgpack-c's {@code unpack} does.
 */
final class CppConductorBody {
    private CppConductorBody() {}

    /**
     * The root map of a request's body (null: none); 400 {@code invalid_msgpack} when the body holds no msgpack value
     * or another one. Read from the array under the buffer when it has one, not from a copy of the prompt.
     */
    static MsgpackValues.MapValue read(Buffer body) {
        if (body instanceof BufferInternal internal && internal.getByteBuf().hasArray()) {
            ByteBuf bytes = internal.getByteBuf();
            return read(bytes.array(), bytes.arrayOffset() + bytes.readerIndex(), bytes.readableBytes());
        }
        byte[] copy = body == null ? new byte[0] : body.getBytes();
        return read(copy, 0, copy.length);
    }

    static MsgpackValues.MapValue read(byte[] body) {
        return read(body, 0, body.length);
    }

    private static MsgpackValues.MapValue read(byte[] body, int offset, int length) {
        Object root;
        try {
            root = MsgpackValues.first(body, offset, length);
        } catch (MsgpackValues.Malformed e) {
            throw CppConductorError.invalid(CppConductorError.INVALID_MSGPACK, "Invalid msgpack object", null);
        }
        if (!(root instanceof MsgpackValues.MapValue map)) {
            throw CppConductorError.invalid(
                    CppConductorError.INVALID_MSGPACK, "request body must be a msgpack map", null);
        }
        return map;
    }
}
