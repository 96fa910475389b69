package dev.kvindexer.conductor.http;

import dev.kvindexer.web.HttpError;

/**
 * An error in the C++ Mooncake Conductor's shape (docs/api/mooncake-cpp.md#common-rules): {@code {"error": <text>, "reason": <code>,
 * "field"?, "index"?}} for a request that fails validation, or {@code {"error": <text>}} alone for an operational
 * error. Note the members are the other way round from the Mooncake JSON flavor's (section 8), whose {@code error} is the
 * code.
 */
public final class CppConductorError extends HttpError {
    public static final String UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type";
    public static final String INVALID_MSGPACK = "invalid_msgpack";
    public static final String UNKNOWN_FIELD = "unknown_field";
    public static final String MISSING = "missing";
    public static final String INVALID_TYPE = "invalid_type";
    public static final String INVALID_VALUE = "invalid_value";
    public static final String OUT_OF_RANGE = "out_of_range";
    public static final String UNSUPPORTED = "unsupported";
    public static final String INVALID_REGISTRATION = "invalid_registration";

    private final String reason;
    private final String field;
    private final long index;

    private CppConductorError(int status, String text, String reason, String field, long index) {
        super(status, text);
        this.reason = reason;
        this.field = field;
        this.index = index;
    }

    /** 400 with a reason code and, when one field is at fault, its name. */
    static CppConductorError invalid(String reason, String text, String field) {
        return new CppConductorError(400, text, reason, field, -1);
    }

    /** 400 for one element of an array field. */
    static CppConductorError invalidElement(String reason, String text, String field, long index) {
        return new CppConductorError(400, text, reason, field, index);
    }

    /** An operational error: {@code {"error": text}} alone. */
    static CppConductorError operational(int status, String text) {
        return new CppConductorError(status, text, null, null, -1);
    }

    /** The reason code, or null for an operational error. */
    String reason() {
        return reason;
    }

    String field() {
        return field;
    }

    /** The array index at fault, or -1. */
    long index() {
        return index;
    }
}
