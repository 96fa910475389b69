package dev.kvindexer.http;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

/** The HTTP adapter of the indexer; one instance per event loop, all sharing the port. */
public final class HttpVerticle extends VerticleBase {
    /** Sized for one million tokens (QUERY_REQUEST_BODY_LIMIT_BYTES). */
    static final long QUERY_BODY_LIMIT = 8L * 1024 * 1024;
    /** The reference framework's default for every other route. */
    static final long DEFAULT_BODY_LIMIT = 2L * 1024 * 1024;

    private final NodeServices node;
    private final String host;
    private final int port;
    private HttpServer server;

    public HttpVerticle(NodeServices node, String host, int port) {
        this.node = node;
        this.host = host;
        this.port = port;
    }

    @Override
    public Future<?> start() {
        server = vertx.createHttpServer();
        return server.requestHandler(router()).listen(port, host);
    }

    Router router() {
        Router router = Router.router(vertx);
        DynamoRoutes dynamo = new DynamoRoutes(vertx, node);
        router.get("/health").handler(ctx -> ctx.response().setStatusCode(200).end());
        router.get("/ready").handler(ctx -> {
            String waiting = node.gate().reason();
            if (waiting == null) {
                Responses.json(ctx, 200, "{\"status\":\"ready\"}");
            } else {
                Responses.error(ctx, 503, "not ready: " + waiting);
            }
        });
        router.get("/workers").handler(guard(dynamo::workers));
        router.get("/dump").handler(guard(dynamo::dump));
        router.get("/peers").handler(guard(dynamo::peers));
        postJson(router, "/query", QUERY_BODY_LIMIT, dynamo::query);
        postJson(router, "/query_by_hash", DEFAULT_BODY_LIMIT, dynamo::queryByHash);
        postJson(router, "/register", DEFAULT_BODY_LIMIT, dynamo::register);
        postJson(router, "/unregister", DEFAULT_BODY_LIMIT, dynamo::unregister);
        postJson(router, "/register_peer", DEFAULT_BODY_LIMIT, dynamo::registerPeer);
        postJson(router, "/deregister_peer", DEFAULT_BODY_LIMIT, dynamo::deregisterPeer);
        if (node.testEndpoints()) {
            postJson(router, "/test/pause_listener", DEFAULT_BODY_LIMIT, dynamo::pauseListener);
            postJson(router, "/test/resume_listener", DEFAULT_BODY_LIMIT, dynamo::resumeListener);
        }
        router.route().failureHandler(HttpVerticle::failure);
        router.errorHandler(404, ctx -> Responses.error(ctx, 404,
                "no route for " + ctx.request().method() + " " + ctx.request().path()));
        router.errorHandler(405, ctx -> Responses.error(ctx, 405,
                "method " + ctx.request().method() + " not allowed on " + ctx.request().path()));
        return router;
    }

    /** Content-Type is checked before the body is read (415 wins over 413), as the reference's extractor does. */
    private static void postJson(Router router, String path, long bodyLimit, Handler<RoutingContext> handler) {
        router.route(HttpMethod.POST, path)
                .handler(ctx -> {
                    if (JsonRequest.isJsonContentType(ctx.request().getHeader("content-type"))) {
                        ctx.next();
                    } else {
                        Responses.error(ctx, 415, "Expected request with `Content-Type: application/json`");
                    }
                });
        // A second route for the same path: Vert.x Web wants body handlers ahead of user handlers on a route.
        router.route(HttpMethod.POST, path)
                .handler(BodyHandler.create(false).setBodyLimit(bodyLimit))
                .handler(guard(handler));
    }

    /** Turns an {@link HttpError} thrown while parsing into its JSON answer. */
    private static Handler<RoutingContext> guard(Handler<RoutingContext> handler) {
        return ctx -> {
            try {
                handler.handle(ctx);
            } catch (RuntimeException e) {
                Responses.error(ctx, e);
            }
        };
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

    /** The bound port (differs from the configured one when that was 0). */
    public int actualPort() {
        return server.actualPort();
    }

    @Override
    public Future<?> stop() {
        return server == null ? Future.succeededFuture() : server.close();
    }
}
