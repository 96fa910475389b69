package dev.kvindexer.http;

/** A request that cannot be served, with the status to answer and the message for {@code {"error": ...}}. */
public class HttpError extends RuntimeException {
    private final int status;

    public HttpError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }

    /** Valid JSON of the wrong shape: the reference answers 422 with serde's wording. */
    static HttpError shape(String detail) {
        return new HttpError(422, "Failed to deserialize the JSON body into the target type: " + detail);
    }
}
