package dev.kvindexer.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBinding;

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

    /** The Go Conductor's error answer: its code, the reason, and the offending member when there is one. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Answer(String error, String reason, String field) {}

    @Override
    public String body() {
        return JsonBinding.encode(new Answer(code, getMessage(), field)).toString();
    }
}
