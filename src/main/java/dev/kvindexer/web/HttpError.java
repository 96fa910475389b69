package dev.kvindexer.web;

import dev.kvindexer.event.Refusal;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
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

    /** Answers {@code response} with this error: its status, a JSON content type and {@link #body}. */
    public Future<Void> answer(HttpServerResponse response) {
        return response.setStatusCode(status)
                .putHeader("content-type", "application/json")
                .end(body());
    }

    /** The answer to a component's refusal: the HTTP status of its kind, and its text. */
    public static HttpError of(Refusal refusal) {
        return new HttpError(status(refusal.kind()), refusal.getMessage());
    }

    /** The HTTP status every service answers a refusal of {@code kind} with. */
    public static int status(Refusal.Kind kind) {
        return switch (kind) {
            case BAD_REQUEST -> 400;
            case INVALID -> 422;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case FULL -> 429;
            case UNAVAILABLE -> 503;
        };
    }

    /** Valid JSON of the wrong shape: the reference answers 422 with serde's wording. */
    public static HttpError shape(String detail) {
        return new HttpError(422, "Failed to deserialize the JSON body into the target type: " + detail);
    }
}
