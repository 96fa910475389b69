package dev.kvindexer.web;

import io.vertx.core.http.HttpServerRequest;

/** The length a request's head declares for its body, read one way by every check that looks at it. */
final class ContentLength {
    /** No Content-Length: the body is chunked, or there is none. */
    static final long NONE = -1;
    /**
     * A Content-Length that is no non-negative decimal number. Netty's decoder refuses such a head before any handler
     * sees it; should one arrive after all, it reads as larger than every limit.
     */
    static final long UNREADABLE = Long.MAX_VALUE;

    private ContentLength() {}

    /** The declared length, {@link #NONE}, or {@link #UNREADABLE}. */
    static long of(HttpServerRequest request) {
        String length = request.getHeader("content-length");
        if (length == null) {
            return NONE;
        }
        try {
            long declared = Long.parseLong(length.trim());
            return declared < 0 ? UNREADABLE : declared;
        } catch (NumberFormatException e) {
            return UNREADABLE;
        }
    }
}
