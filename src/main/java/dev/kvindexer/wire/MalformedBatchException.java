package dev.kvindexer.wire;

/** STUB (replaced by the wire branch). */
public final class MalformedBatchException extends Exception {
    public MalformedBatchException(String message) {
        super(message);
    }
}
