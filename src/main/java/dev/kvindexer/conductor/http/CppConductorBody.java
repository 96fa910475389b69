package dev.kvindexer.conductor.http;

import dev.kvindexer.wire.MsgpackValues;

/**
 * A C++ Mooncake Conductor request body (docs/api/mooncake-cpp.md#common-rules): the first msgpack value, which must be a map. Trailing bytes
 * are ignored, as msgpack-c's {@code unpack} does.
 */
final class CppConductorBody {
    private CppConductorBody() {}

    /** The root map; 400 {@code invalid_msgpack} when the body holds no msgpack value or another one. */
    static MsgpackValues.MapValue read(byte[] body) {
        Object root;
        try {
            root = MsgpackValues.first(body);
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
