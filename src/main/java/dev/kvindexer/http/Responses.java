package dev.kvindexer.http;

import dev.kvindexer.registry.RegistryException;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
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

    private Responses() {
    }

    public static void json(RoutingContext ctx, int status, String body) {
        if (ctx.response().ended() || ctx.response().closed()) {
            return;
        }
        String msgpack = MsgpackBodies.responseType(ctx);
        if (msgpack != null) {
            ctx.response().setStatusCode(status).putHeader("content-type", msgpack).end(MsgpackBodies.encode(body));
            return;
        }
        ctx.response().setStatusCode(status).putHeader("content-type", "application/json").end(body);
    }

    public static void error(RoutingContext ctx, Throwable t) {
        int status;
        String message;
        if (t instanceof MooncakeError) {
            mooncakeError(ctx, (MooncakeError) t);
            return;
        }
        if (ctx.response().ended() || ctx.response().closed()) {
            // Answered already (a timeout) or gone: nothing to say, and nothing went wrong here.
            LOG.debug("request {} {} failed after its answer: {}", ctx.request().method(), ctx.request().path(),
                    t.toString());
            return;
        }
        if (t instanceof HttpError) {
            status = ((HttpError) t).status();
            message = t.getMessage();
        } else if (t instanceof RegistryException) {
            status = ((RegistryException) t).status();
            message = t.getMessage();
        } else if (t instanceof HttpException h && h.getStatusCode() < 500) {
            status = h.getStatusCode();
            message = h.getPayload() != null ? h.getPayload() : JsonRoutes.reason(status);
        } else {
            status = 500;
            message = "internal error: " + t;
            LOG.error("request {} {} failed", ctx.request().method(), ctx.request().path(), t);
        }
        error(ctx, status, message);
    }

    public static void error(RoutingContext ctx, int status, String message) {
        json(ctx, status, "{\"error\":" + Json.encode(message) + "}");
    }

    static void mooncakeError(RoutingContext ctx, MooncakeError e) {
        StringBuilder sb = new StringBuilder("{\"error\":").append(Json.encode(e.code()))
                .append(",\"reason\":").append(Json.encode(e.getMessage()));
        if (e.field() != null) {
            sb.append(",\"field\":").append(Json.encode(e.field()));
        }
        json(ctx, e.status(), sb.append('}').toString());
    }

    /** Answers {@code {"status":"ok"}} with {@code status} when the operation succeeds, else its error. */
    static void ok(RoutingContext ctx, Future<?> operation, int status) {
        operation.onComplete(ar -> {
            if (ar.succeeded()) {
                json(ctx, status, OK);
            } else {
                error(ctx, ar.cause());
            }
        });
    }
}
