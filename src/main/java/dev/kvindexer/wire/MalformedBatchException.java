package dev.kvindexer.wire;

/** A payload or frame that cannot be decoded as a batch at all; the whole message is skipped. */
public final class MalformedBatchException extends Exception {
    private static final long serialVersionUID = 1L;

    public MalformedBatchException(String message) {
        super(message);
    }

    public MalformedBatchException(String message, Throwable cause) {
        super(message, cause);
    }
}
