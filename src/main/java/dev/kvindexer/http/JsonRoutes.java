package dev.kvindexer.http;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.function.Function;

/**
 * Mounts JSON routes the way every kvindexer service answers them (the indexer and the slot tracker): Content-Type
 * checked before the body is read (415 wins over 413, as the reference's extractor does), a body limit per route,
 * and every failure, unknown route and wrong method answered as {@code {"error": "..."}}.
 */
public final class JsonRoutes {
    /** The reference framework's default body limit. */
    public static final long DEFAULT_BODY_LIMIT = 2L * 1024 * 1024;

    private JsonRoutes() {
    }

    public static HttpError unsupportedMediaType() {
        return new HttpError(415, "Expected request with `Content-Type: application/json`");
    }

    /** A POST route whose body must be JSON. */
    public static void post(Router router, String path, long bodyLimit, Handler<RoutingContext> handler) {
        post(router, path, bodyLimit, ctx -> {
            if (JsonRequest.isJsonContentType(ctx.request().getHeader("content-type"))) {
                ctx.next();
            } else {
                Responses.error(ctx, unsupportedMediaType());
            }
        }, handler);
    }

    /** A POST route whose {@code contentCheck} answers a refused Content-Type or passes the request on. */
    static void post(Router router, String path, long bodyLimit, Handler<RoutingContext> contentCheck,
                     Handler<RoutingContext> handler) {
        router.route(HttpMethod.POST, path).handler(contentCheck);
        // A second route for the same path: Vert.x Web wants body handlers ahead of user handlers on a route.
        router.route(HttpMethod.POST, path)
                .handler(BodyHandler.create(false).setBodyLimit(bodyLimit))
                .handler(guard(handler));
    }

    /**
     * Answers 413 and returns true for a request that is no POST yet declares a body over the default limit: only
     * POST routes read bodies (under their own limits), so every route has one. Call it first in a catch-all handler.
     */
    public static boolean refusedOversizedBody(RoutingContext ctx) {
        if (ctx.request().method() == HttpMethod.POST) {
            return false;
        }
        String length = ctx.request().getHeader("content-length");
        long declared;
        try {
            declared = length == null ? 0 : Long.parseLong(length.trim());
        } catch (NumberFormatException e) {
            declared = 0;
        }
        if (declared <= DEFAULT_BODY_LIMIT) {
            return false;
        }
        Responses.error(ctx, 413, "request body exceeds the limit of this route");
        return true;
    }

    /** Turns an exception thrown by a handler (an {@link HttpError} while parsing, mostly) into its JSON answer. */
    public static Handler<RoutingContext> guard(Handler<RoutingContext> handler) {
        return ctx -> {
            try {
                handler.handle(ctx);
            } catch (RuntimeException e) {
                Responses.error(ctx, e);
            }
        };
    }

    /**
     * The service's checked-in OpenAPI document (a classpath resource under {@code openapi/}), read once. Call it off
     * the event loop: a verticle's constructor runs on the deploying thread.
     */
    public static Buffer openApiDocument(String name) {
        try (InputStream in = JsonRoutes.class.getResourceAsStream("/openapi/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource openapi/" + name);
            }
            return Buffer.buffer(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code GET /openapi.json}: the document, as checked in. */
    public static void serveOpenApi(Router router, Buffer document) {
        router.get("/openapi.json").handler(ctx -> ctx.response().setStatusCode(200)
                .putHeader("content-type", "application/json").end(document));
    }

    /** Failures (413 from the body limit among them), unknown routes and wrong methods as JSON errors. */
    public static void answerFailures(Router router, Function<RoutingContext, String> noRoute,
                                      Function<RoutingContext, String> wrongMethod) {
        router.route().failureHandler(JsonRoutes::failure);
        router.errorHandler(404, ctx -> Responses.error(ctx, 404, noRoute.apply(ctx)));
        router.errorHandler(405, ctx -> Responses.error(ctx, 405, wrongMethod.apply(ctx)));
    }

    private static void failure(RoutingContext ctx) {
        int status = ctx.statusCode();
        if (status == 413) {
            Responses.error(ctx, 413, "request body exceeds the limit of this route");
        } else if (ctx.failure() != null) {
            Responses.error(ctx, ctx.failure());
        } else {
            Responses.error(ctx, status > 0 ? status : 500, "request failed with status " + status);
        }
    }
}
