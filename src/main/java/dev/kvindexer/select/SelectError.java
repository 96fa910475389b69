package dev.kvindexer.select;

/** A refused selection-service request, with the HTTP status and Dynamo's text (SPEC §12.15). Nothing changed. */
public final class SelectError extends RuntimeException {
    private final int status;

    public SelectError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }

    static SelectError badRequest(String message) {
        return new SelectError(400, message);
    }

    static SelectError notFound(String message) {
        return new SelectError(404, message);
    }

    static SelectError conflict(String message) {
        return new SelectError(409, message);
    }

    static SelectError unavailable(String message) {
        return new SelectError(503, message);
    }
}
