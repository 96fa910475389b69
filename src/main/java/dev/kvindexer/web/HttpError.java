package dev.kvindexer.web;

import io.vertx.core.json.Json;

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

    /** The response body: {@code {"error": message}}, or the shape a client's API gives its errors. */
    public String body() {
        return "{\"error\":" + Json.encode(getMessage()) + "}";
    }

    /** Valid JSON of the wrong shape: the reference answers 422 with serde's wording. */
    public static HttpError shape(String detail) {
        return new HttpError(422, "Failed to deserialize the JSON body into the target type: " + detail);
    }
}
