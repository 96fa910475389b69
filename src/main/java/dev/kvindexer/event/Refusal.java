package dev.kvindexer.event;

/**
 * A request refused for what it asks, in the words the reference clients expect; nothing was changed. Its kind says
 * why, and the web layer answers each kind with its HTTP status, so no component below it speaks HTTP.
 */
public final class Refusal extends RuntimeException {
    /** Why a request was refused. */
    public enum Kind {
        /** The request itself is wrong (400). */
        BAD_REQUEST,
        /** Well-formed, but a value is out of what may be asked (422). */
        INVALID,
        /** What it names does not exist (404). */
        NOT_FOUND,
        /** It contradicts what exists (409). */
        CONFLICT,
        /** No room for it now: a limit is reached, and it may succeed once something has gone (429). */
        FULL,
        /** Nothing can serve it now (503). */
        UNAVAILABLE
    }

    private final Kind kind;

    public Refusal(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    public static Refusal badRequest(String message) {
        return new Refusal(Kind.BAD_REQUEST, message);
    }

    public static Refusal invalid(String message) {
        return new Refusal(Kind.INVALID, message);
    }

    public static Refusal notFound(String message) {
        return new Refusal(Kind.NOT_FOUND, message);
    }

    public static Refusal conflict(String message) {
        return new Refusal(Kind.CONFLICT, message);
    }

    public static Refusal full(String message) {
        return new Refusal(Kind.FULL, message);
    }

    public static Refusal unavailable(String message) {
        return new Refusal(Kind.UNAVAILABLE, message);
    }
}
