package dev.kvindexer.selectservice;

import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** Answers a route with a JSON value that a future computes on the service's context, or with what refused it. */
final class Replies {
    private static final JsonObject OK = new JsonObject().put("status", "ok");

    private Replies() {}

    static void send(RoutingContext ctx, int status, Future<?> result) {
        result.onComplete(ar -> {
            if (ar.failed()) {
                Responses.error(ctx, ar.cause());
            } else {
                Object v = ar.result();
                Responses.json(ctx, status, v instanceof JsonObject o ? o.encode() : ((JsonArray) v).encode());
            }
        });
    }

    /** {@code {"status":"ok"}} once the step is done. */
    static void ok(RoutingContext ctx, Future<Void> step) {
        send(ctx, 200, step.map(v -> OK));
    }
}
