package dev.kvindexer.http;

/**
 * An error in the Mooncake Conductor's shape (SPEC §8.2–8.4): {@code {"error": <code>, "reason": <text>}} plus the
 * offending {@code field} when there is one.
 */
final class MooncakeError extends HttpError {
    static final String INVALID_REGISTRATION = "invalid_registration";
    static final String INVALID_REQUEST = "invalid_request";
    static final String NOT_FOUND = "not_found";

    private final String code;
    private final String field;

    MooncakeError(int status, String code, String reason, String field) {
        super(status, reason);
        this.code = code;
        this.field = field;
    }

    String code() {
        return code;
    }

    /** The offending request member, or null. */
    String field() {
        return field;
    }
}
