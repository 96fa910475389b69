package dev.kvindexer.web;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.HttpException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.function.Function;

/**
 * Mounts JSON routes the way every kvindexer service answers them (the indexer and the slot tracker): Content-Type
 * checked before the body is read (415 wins over 413, as the reference's extractor does), a body limit per route,
 * and every failure, unknown route and wrong method answered as {@code {"error": "..."}}.
 */
public final class JsonRoutes {
    /** The reference framework's default body limit. */
    public static final long DEFAULT_BODY_LIMIT = 2L * 1024 * 1024;

    private JsonRoutes() {}

    public static HttpError unsupportedMediaType() {
        return new HttpError(415, "Expected request with `Content-Type: application/json`");
    }

    /** A POST route whose body must be JSON. */
    public static void post(Router router, String path, long bodyLimit, Handler<RoutingContext> handler) {
        post(
                router,
                path,
                bodyLimit,
                ctx -> {
                    if (JsonRequest.isJsonContentType(ctx.request().getHeader("content-type"))) {
                        ctx.next();
                    } else {
                        Responses.error(ctx, unsupportedMediaType());
                    }
                },
                handler);
    }

    /** A POST route whose {@code contentCheck} answers a refused Content-Type or passes the request on. */
    public static void post(
            Router router,
            String path,
            long bodyLimit,
            Handler<RoutingContext> contentCheck,
            Handler<RoutingContext> handler) {
        router.route(HttpMethod.POST, path).handler(contentCheck);
        // A second route for the same path: Vert.x Web wants body handlers ahead of user handlers on a route.
        router.route(HttpMethod.POST, path).handler(bodies(bodyLimit)).handler(guard(handler));
    }

    /**
     * The body handler of every route that reads a body: at most {@code limit} bytes, gathered into a buffer of the
     * length the request declares (Vert.x caps that first allocation at 64 KiB; {@link RequestPreamble} has already
     * reserved the declared bytes) rather than one grown by doubling as bytes arrive.
     */
    public static BodyHandler bodies(long limit) {
        return BodyHandler.create(false).setBodyLimit(limit).setPreallocateBodyBuffer(true);
    }

    /**
     * Answers and returns true for a request no route may take: one whose query string does not decode (400), or
     * that is no POST yet declares a body over the default limit (413). Call it first in a catch-all handler.
     */
    public static boolean refusedBeforeRouting(RoutingContext ctx) {
        return refusedOversizedBody(ctx) || refusedQuery(ctx);
    }

    /**
     * Decodes the query string once, so a bad percent-escape is the client's 400 here rather than an exception in
     * whichever handler reads a parameter first (Vert.x Web then keeps an empty set of parameters).
     */
    private static boolean refusedQuery(RoutingContext ctx) {
        try {
            ctx.queryParams();
            return false;
        } catch (HttpException | IllegalArgumentException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            Responses.error(ctx, 400, "invalid query string: " + cause.getMessage());
            return true;
        }
    }

    /**
     * Only POST routes read bodies (under their own limits), so a body over the default limit on any other method is
     * refused: every route has a limit.
     */
    private static boolean refusedOversizedBody(RoutingContext ctx) {
        if (ctx.request().method() == HttpMethod.POST) {
            return false;
        }
        if (ContentLength.of(ctx.request()) <= DEFAULT_BODY_LIMIT) {
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

    /**
     * {@code GET /health} answered by {@code get}, and {@code HEAD /health} 200 with no body, as Dynamo's servers answer
     * HEAD wherever they answer GET: probes that send HEAD see the server healthy.
     */
    public static void serveHealth(Router router, Handler<RoutingContext> get) {
        router.get("/health").handler(get);
        router.head("/health").handler(ctx -> ctx.response().setStatusCode(200).end());
    }

    /** {@code GET /openapi.json}: the document, as checked in. */
    public static void serveOpenApi(Router router, Buffer document) {
        router.get("/openapi.json")
                .handler(ctx -> ctx.response()
                        .setStatusCode(200)
                        .putHeader("content-type", "application/json")
                        .end(document));
    }

    /**
     * Failures (413 from the body limit among them), unknown routes and wrong methods as JSON errors; so are the
     * errors Vert.x Web answers by itself (a path that does not decode, a failing failure handler), by status.
     */
    public static void answerFailures(
            Router router, Function<RoutingContext, String> noRoute, Function<RoutingContext, String> wrongMethod) {
        router.route().failureHandler(JsonRoutes::failure);
        for (int status = 400; status < 600; status++) {
            int code = status;
            router.errorHandler(code, ctx -> Responses.error(ctx, code, reason(code)));
        }
        router.errorHandler(404, ctx -> Responses.error(ctx, 404, noRoute.apply(ctx)));
        router.errorHandler(405, ctx -> Responses.error(ctx, 405, wrongMethod.apply(ctx)));
    }

    /** The standard reason phrase of a status, lower case, as an error message. */
    public static String reason(int status) {
        return HttpResponseStatus.valueOf(status).reasonPhrase().toLowerCase(Locale.ROOT);
    }

    private static void failure(RoutingContext ctx) {
        int status = ctx.statusCode();
        Throwable failure = ctx.failure();
        if (status == 413) {
            Responses.error(ctx, 413, "request body exceeds the limit of this route");
        } else if (failure != null && status >= 400 && status < 500) {
            Responses.error(ctx, status, reason(status) + ": " + failure.getMessage());
        } else if (failure != null && status == 200) {
            // BodyHandler fails a request whose body stream broke (bad chunk framing, a closed connection) with 200.
            Responses.error(ctx, 400, "the request body could not be read: " + failure.getMessage());
        } else if (failure != null) {
            Responses.error(ctx, failure);
        } else {
            Responses.error(ctx, status > 0 ? status : 500, status > 0 ? reason(status) : "request failed");
        }
    }
}
