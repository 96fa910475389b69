package dev.kvindexer.ingest;

/** A listener refused because the node runs as many as its ceiling allows; the registration is refused with it. */
public final class ListenerLimitException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ListenerLimitException(int limit) {
        super("listener limit reached: " + limit + " listeners (--max-listeners)", null, false, false);
    }
}
