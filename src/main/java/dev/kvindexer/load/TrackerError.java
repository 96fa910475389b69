package dev.kvindexer.load;

/** A refused slot tracker operation, with the HTTP status that says why (SPEC §9). Nothing was changed. */
public final class TrackerError extends RuntimeException {
    private final int status;

    TrackerError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }

    static TrackerError notFound(String message) {
        return new TrackerError(404, message);
    }

    static TrackerError conflict(String message) {
        return new TrackerError(409, message);
    }

    static TrackerError invalid(String message) {
        return new TrackerError(400, message);
    }
}
