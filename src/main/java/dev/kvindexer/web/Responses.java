package dev.kvindexer.web;

import dev.kvindexer.event.Refusal;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes JSON responses (msgpack when the request asked for it, {@link MsgpackBodies}); every error becomes
 * {@code {"error": "..."}} with its status.
 */
public final class Responses {
    private static final Logger LOG = LoggerFactory.getLogger(Responses.class);
    public static final String OK = "{\"status\":\"ok\"}";

    private Responses() {}

    public static void json(RoutingContext ctx, int status, String body) {
        if (ctx.response().ended() || ctx.response().closed()) {
            return;
        }
        String msgpack = MsgpackBodies.responseType(ctx);
        if (msgpack != null) {
            ctx.response()
                    .setStatusCode(status)
                    .putHeader("content-type", msgpack)
                    .end(MsgpackBodies.encode(body));
            return;
        }
        jsonResponse(ctx, status).end(body);
    }

    /** An answer record (or a list of them) as JSON, written by {@link JsonBinding#encode}. */
    public static void answer(RoutingContext ctx, int status, Object answer) {
        json(ctx, status, JsonBinding.encode(answer));
    }

    /** {@link #json(RoutingContext, int, String)} for a body already written as bytes. */
    public static void json(RoutingContext ctx, int status, Buffer body) {
        if (ctx.response().ended() || ctx.response().closed()) {
            return;
        }
        if (MsgpackBodies.responseType(ctx) != null) {
            json(ctx, status, body.toString());
            return;
        }
        jsonResponse(ctx, status).end(body);
    }

    private static HttpServerResponse jsonResponse(RoutingContext ctx, int status) {
        return ctx.response().setStatusCode(status).putHeader("content-type", "application/json");
    }

    public static void error(RoutingContext ctx, Throwable t) {
        if (ctx.response().ended() || ctx.response().closed()) {
            // Answered already (a timeout) or gone: nothing to say, and nothing went wrong here.
            LOG.debug(
                    "request {} {} failed after its answer: {}",
                    ctx.request().method(),
                    ctx.request().path(),
                    t.toString());
            return;
        }
        if (t instanceof HttpError e) {
            json(ctx, e.status(), e.body());
        } else if (t instanceof Refusal r) {
            HttpError e = HttpError.of(r);
            json(ctx, e.status(), e.body());
        } else if (t instanceof HttpException h && h.getStatusCode() < 500) {
            error(
                    ctx,
                    h.getStatusCode(),
                    h.getPayload() != null ? h.getPayload() : JsonRoutes.reason(h.getStatusCode()));
        } else {
            LOG.error(
                    "request {} {} failed",
                    ctx.request().method(),
                    ctx.request().path(),
                    t);
            error(ctx, 500, "internal error: " + t);
        }
    }

    public static void error(RoutingContext ctx, int status, String message) {
        json(ctx, status, new HttpError(status, message).body());
    }

    /** Answers {@code {"status":"ok"}} with {@code status} when the operation succeeds, else its error. */
    public static void ok(RoutingContext ctx, Future<?> operation, int status) {
        operation.onComplete(ar -> {
            if (ar.succeeded()) {
                json(ctx, status, OK);
            } else {
                error(ctx, ar.cause());
            }
        });
    }
}
