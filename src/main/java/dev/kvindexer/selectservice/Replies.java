package dev.kvindexer.selectservice;

import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;

/** Answers a route with an answer record that a future computes on the service's context, or with what refused it. */
final class Replies {
    private Replies() {}

    static void send(RoutingContext ctx, int status, Future<?> result) {
        result.onComplete(ar -> {
            if (ar.failed()) {
                Responses.error(ctx, ar.cause());
            } else {
                Responses.answer(ctx, status, ar.result());
            }
        });
    }

    /** {@code {"status":"ok"}} once the step is done. */
    static void ok(RoutingContext ctx, Future<Void> step) {
        Responses.ok(ctx, step, 200);
    }
}
