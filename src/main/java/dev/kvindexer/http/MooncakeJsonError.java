package dev.kvindexer.http;

import dev.kvindexer.web.HttpError;
import io.vertx.core.json.Json;

/**
 * An error in the Mooncake JSON flavor's shape (docs/api/mooncake-json.md): {@code {"error": <code>, "reason": <text>}} plus the
 * offending {@code field} when there is one.
 */
final class MooncakeJsonError extends HttpError {
    static final String INVALID_REGISTRATION = "invalid_registration";
    static final String INVALID_REQUEST = "invalid_request";
    static final String NOT_FOUND = "not_found";

    private final String code;
    private final String field;

    MooncakeJsonError(int status, String code, String reason, String field) {
        super(status, reason);
        this.code = code;
        this.field = field;
    }

    /** A 400 refusal with the flavor's {@code code}, naming {@code field} when there is one. */
    static MooncakeJsonError invalid(String code, String reason, String field) {
        return new MooncakeJsonError(400, code, reason, field);
    }

    String code() {
        return code;
    }

    /** The offending request member, or null. */
    String field() {
        return field;
    }

    @Override
    public String body() {
        StringBuilder sb = new StringBuilder("{\"error\":")
                .append(Json.encode(code))
                .append(",\"reason\":")
                .append(Json.encode(getMessage()));
        if (field != null) {
            sb.append(",\"field\":").append(Json.encode(field));
        }
        return sb.append('}').toString();
    }
}
