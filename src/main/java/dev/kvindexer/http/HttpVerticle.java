package dev.kvindexer.http;

import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.metrics.HttpRequestMetrics;
import dev.kvindexer.web.AccessLog;
import dev.kvindexer.web.BearerAuth;
import dev.kvindexer.web.DirectRoute;
import dev.kvindexer.web.HttpEdge;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonRequest;
import dev.kvindexer.web.JsonRoutes;
import dev.kvindexer.web.MsgpackBodies;
import dev.kvindexer.web.RequestPreamble;
import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/** The HTTP adapter of the indexer; one instance per event loop, all sharing the port. */
public final class HttpVerticle extends VerticleBase {
    /** Sized for one million tokens (QUERY_REQUEST_BODY_LIMIT_BYTES). */
    static final long QUERY_BODY_LIMIT = 8L * 1024 * 1024;
    /** The reference framework's default for every other route. */
    static final long DEFAULT_BODY_LIMIT = JsonRoutes.DEFAULT_BODY_LIMIT;

    /** Routes that change state or administer the node: the bearer token guards them. */
    static final List<String> GUARDED =
            List.of("/register", "/unregister", "/events", "/register_peer", "/deregister_peer", "/reopen_logs");

    static final List<String> GUARDED_TEST_ROUTES = List.of("/test/pause_listener", "/test/resume_listener");

    private final IndexerApi api;
    private final SecurityConfig security;
    private final HttpConfig limits;
    private final Buffer openApi = JsonRoutes.openApiDocument("indexer.json");
    private final String host;
    private final int port;
    /** The bearer token's check, or null when the node has no token. */
    private final BearerAuth auth;

    private HttpEdge server;

    public HttpVerticle(IndexerApi api, SecurityConfig security, HttpConfig limits, String host, int port) {
        this.api = api;
        this.security = security;
        this.limits = limits;
        this.auth = security.authToken() == null ? null : new BearerAuth(security.authToken());
        this.host = host;
        this.port = port;
    }

    @Override
    public Future<?> start() {
        return HttpEdge.listen(vertx, requests(), limits, security, host, port).onSuccess(edge -> server = edge);
    }

    /**
     * The router, behind the C++ Conductor's msgpack {@code /query} answered ahead of it: the request its clients send
     * most, and a short prompt's answer costs little more than the router's own work would.
     */
    private Handler<HttpServerRequest> requests() {
        Router router = Router.router(vertx);
        RequestPreamble preamble = routes(router);
        MsgpackApi conductor = api.msgpack();
        // the route guards nothing that changes state, so only --auth-all asks it for the token
        BearerAuth token = security.authAll() ? auth : null;
        return new DirectRoute(
                HttpMethod.POST,
                "/query",
                QUERY_BODY_LIMIT,
                request -> MsgpackBodies.isMsgpackType(request.getHeader("content-type"))
                        && (token == null || token.accepts(request.getHeader("authorization"))),
                preamble,
                conductor::query,
                router);
    }

    /** Every route of the indexer on {@code vertx} (package-private for the OpenAPI coverage test). */
    Router routerOn(io.vertx.core.Vertx vertx) {
        Router router = Router.router(vertx);
        routes(router);
        return router;
    }

    private RequestPreamble routes(Router router) {
        DynamoRoutes dynamo = api.dynamo();
        MooncakeJsonRoutes mooncake = api.mooncake();
        // The C++ Conductor generation speaks msgpack: an Accept that asks for it gets it
        // (docs/api/mooncake-cpp.md#common-rules).
        RequestPreamble preamble = RequestPreamble.install(
                router,
                HttpRequestMetrics.UNKNOWN,
                api.requestMetrics()::record,
                api.accessLog(),
                true,
                api.network(),
                QUERY_BODY_LIMIT);
        guard(router);
        nodeRoutes(router, dynamo);
        sharedRoutes(router, dynamo, mooncake);
        indexerRoutes(router, dynamo);
        failures(router);
        preamble.labelRoutes(router);
        return preamble;
    }

    /** The bearer token on every route but the dashboard's pages, or on those that change state (--auth-all off). */
    private void guard(Router router) {
        if (auth == null) {
            return;
        }
        if (security.authAll()) {
            router.route().handler(ctx -> {
                if (DashboardRoutes.isPage(ctx.normalizedPath())) {
                    ctx.next();
                } else {
                    auth.handle(ctx);
                }
            });
        } else {
            GUARDED.forEach(path -> router.route(path).handler(auth));
            if (api.testEndpoints()) {
                GUARDED_TEST_ROUTES.forEach(path -> router.route(path).handler(auth));
            }
        }
    }

    /** What the node shows of itself: health, readiness, metrics, the dashboard, its workers, dump and peers. */
    private void nodeRoutes(Router router, DynamoRoutes dynamo) {
        JsonRoutes.serveHealth(router, ctx -> ctx.response().setStatusCode(200).end());
        router.get("/metrics").handler(new MetricsRoute(api.metricsPage())::get);
        DashboardRoutes.install(router, api.overview());
        JsonRoutes.serveOpenApi(router, openApi);
        router.get("/ready").handler(ctx -> {
            String waiting = api.readiness().notReadyReason();
            if (waiting == null) {
                Responses.json(ctx, 200, "{\"status\":\"ready\"}");
            } else {
                Responses.error(ctx, 503, "not ready: " + waiting);
            }
        });
        router.get("/workers").handler(JsonRoutes.guard(dynamo::workers));
        router.get("/dump").handler(JsonRoutes.guard(dynamo::dump));
        router.get("/peers").handler(JsonRoutes.guard(dynamo::peers));
    }

    /**
     * Routes both JSON APIs and the msgpack one share: the body (or ?flavor=) decides which one serves the request
     * (Flavor); a msgpack body is the plugged msgpack API's (docs/api/mooncake-cpp.md).
     */
    private void sharedRoutes(Router router, DynamoRoutes dynamo, MooncakeJsonRoutes mooncake) {
        MsgpackApi conductor = api.msgpack();
        router.get("/services").handler(JsonRoutes.guard(ctx -> {
            if (servicesInMsgpack(ctx)) {
                conductor.services(ctx);
            } else {
                mooncake.services(ctx);
            }
        }));
        router.get("/global_view").handler(conductor::globalView);
        sharedPostJson(
                router,
                "/query",
                QUERY_BODY_LIMIT,
                new JsonFlavors(dynamo::query, mooncake::query),
                ctx -> conductor.query(ctx.body().buffer(), ctx.response()));
        sharedPostJson(
                router,
                "/register",
                DEFAULT_BODY_LIMIT,
                new JsonFlavors(dynamo::register, (c, f) -> mooncake.register(c)),
                conductor::register);
        sharedPostJson(
                router,
                "/unregister",
                DEFAULT_BODY_LIMIT,
                new JsonFlavors(dynamo::unregister, (c, f) -> mooncake.unregister(c)),
                conductor::unregister);
        // The C++ Conductor has no /query_by_hash: a msgpack body there is read as the JSON flavor's
        // (docs/api/mooncake-cpp.md#common-rules).
        JsonFlavors byHash = new JsonFlavors(dynamo::queryByHash, mooncake::queryByHash);
        sharedPostJson(router, "/query_by_hash", DEFAULT_BODY_LIMIT, byHash, byHash::serve);
    }

    /** The Dynamo API's own routes: the tiered lookup, standardized events, peers, logs and the test routes. */
    private void indexerRoutes(Router router, DynamoRoutes dynamo) {
        AccessLog accessLog = api.accessLog();
        postJson(router, "/query_tiered_by_hash", DEFAULT_BODY_LIMIT, false, dynamo::queryTieredByHash);
        postJson(router, "/events", QUERY_BODY_LIMIT, false, api.events()::post);
        router.post("/reopen_logs")
                .handler(JsonRoutes.bodies(DEFAULT_BODY_LIMIT))
                .handler(ctx -> {
                    if (accessLog != null) {
                        accessLog.reopen();
                    }
                    Responses.json(ctx, 200, Responses.OK);
                });
        postJson(router, "/register_peer", DEFAULT_BODY_LIMIT, false, dynamo::registerPeer);
        postJson(router, "/deregister_peer", DEFAULT_BODY_LIMIT, false, dynamo::deregisterPeer);
        if (api.testEndpoints()) {
            postJson(router, "/test/pause_listener", DEFAULT_BODY_LIMIT, false, dynamo::pauseListener);
            postJson(router, "/test/resume_listener", DEFAULT_BODY_LIMIT, false, dynamo::resumeListener);
        }
    }

    /** No route, a wrong method: JSON errors, and the msgpack API's own 405 on its routes to a msgpack client. */
    private void failures(Router router) {
        MsgpackApi conductor = api.msgpack();
        java.util.function.Function<RoutingContext, String> wrongMethod = ctx -> "method "
                + ctx.request().method() + " not allowed on " + ctx.request().path();
        JsonRoutes.answerFailures(
                router,
                ctx -> "no route for " + ctx.request().method() + " "
                        + ctx.request().path(),
                wrongMethod);
        router.errorHandler(405, ctx -> {
            if (conductor.routes().contains(ctx.request().path()) && MsgpackBodies.asksForMsgpack(ctx)) {
                conductor.methodNotAllowed(ctx);
            } else {
                Responses.error(ctx, 405, wrongMethod.apply(ctx));
            }
        });
    }

    /**
     * Which Conductor's {@code GET /services} a request gets: both real callers send a plain GET, the C++ one reading
     * msgpack and the Go one JSON. A request that names either type in {@code Accept} gets it; otherwise JSON while the
     * JSON API has registrations (the Go Conductor's users), and msgpack when it has none, which is how the C++
     * Conductor's users find the node after a restart, to register again.
     */
    private boolean servicesInMsgpack(RoutingContext ctx) {
        String accept = ctx.request().getHeader("accept");
        if (MsgpackBodies.asksForMsgpack(ctx)) {
            return true;
        }
        if (accept != null && accept.toLowerCase(java.util.Locale.ROOT).contains("json")) {
            return false;
        }
        return !api.mooncake().anyRegistered();
    }

    private static final String UNTYPED = "kvindexer.untyped-body";

    /**
     * Content-Type is checked before the body is read (415 wins over 413), as the reference's extractor does. With
     * {@code mooncakeServed} a request without Content-Type is read anyway: Mooncake clients may omit it, and only
     * once the body shows the flavor can a Dynamo request get its 415. A msgpack body is Mooncake's too, answered in
     * msgpack (docs/api/mooncake-json.md#two-apis-on-one-port, docs/api/mooncake-cpp.md#common-rules).
     */
    private static void postJson(
            Router router, String path, long bodyLimit, boolean mooncakeServed, Handler<RoutingContext> handler) {
        if (!mooncakeServed) {
            JsonRoutes.post(router, path, bodyLimit, handler);
            return;
        }
        JsonRoutes.post(
                router,
                path,
                bodyLimit,
                ctx -> {
                    String type = ctx.request().getHeader("content-type");
                    if (JsonRequest.isJsonContentType(type)) {
                        ctx.next();
                    } else if (MsgpackBodies.isMsgpackType(type)) {
                        MsgpackBodies.answerIn(ctx, type);
                        ctx.next();
                    } else if (type == null) {
                        ctx.put(UNTYPED, Boolean.TRUE);
                        ctx.next();
                    } else {
                        Responses.error(ctx, JsonRoutes.unsupportedMediaType());
                    }
                },
                handler);
    }

    /** A Mooncake JSON handler that also learns the response shape asked for. */
    @FunctionalInterface
    private interface MooncakeJsonHandler {
        void handle(RoutingContext ctx, Flavor shape);
    }

    /**
     * A route both APIs share: a msgpack body goes to {@code msgpack}, unless the query asks for the Dynamo flavor,
     * which reads JSON only whatever the bytes; any other body to the Dynamo or Mooncake JSON flavor.
     */
    private static void sharedPostJson(
            Router router, String path, long bodyLimit, JsonFlavors json, Handler<RoutingContext> msgpack) {
        postJson(router, path, bodyLimit, true, ctx -> {
            if (!MsgpackBodies.isMsgpackRequest(ctx)) {
                json.serve(ctx);
                return;
            }
            if (requested(ctx, true) == Flavor.DYNAMO) {
                throw JsonRoutes.unsupportedMediaType();
            }
            msgpack.handle(ctx);
        });
    }

    /** The flavor the query parameters ask for, or null; a bad one is a Mooncake JSON error in a msgpack request. */
    private static Flavor requested(RoutingContext ctx, boolean msgpack) {
        try {
            return Flavor.requested(ctx);
        } catch (HttpError e) {
            throw msgpack ? asMooncakeJson(e) : e;
        }
    }

    /** The Dynamo and Mooncake JSON handlers of one shared route. */
    private record JsonFlavors(Handler<RoutingContext> dynamo, MooncakeJsonHandler mooncake) {
        /** Serves the request in the flavor the query parameters ask for, or else the body shows. */
        void serve(RoutingContext ctx) {
            boolean untyped = ctx.get(UNTYPED) != null;
            boolean msgpack = MsgpackBodies.isMsgpackRequest(ctx);
            Flavor requested = requested(ctx, msgpack);
            JsonRequest body;
            try {
                body = JsonRequest.of(ctx);
            } catch (HttpError e) {
                if (msgpack || (requested != null && requested.mooncakeJson())) {
                    throw asMooncakeJson(e);
                }
                throw untyped ? JsonRoutes.unsupportedMediaType() : e;
            }
            Flavor flavor = requested != null ? requested : msgpack ? Flavor.MOONCAKE_JSON_TENANT : Flavor.of(body);
            if (!flavor.mooncakeJson()) {
                if (untyped || msgpack) {
                    throw JsonRoutes.unsupportedMediaType();
                }
                dynamo.handle(ctx);
                return;
            }
            try {
                mooncake.handle(ctx, flavor);
            } catch (MooncakeJsonError e) {
                throw e;
            } catch (HttpError e) {
                throw asMooncakeJson(e);
            }
        }
    }

    /** A parse or shape error inside a Mooncake JSON request is its 400 invalid_request. */
    private static MooncakeJsonError asMooncakeJson(HttpError e) {
        int status = e.status() == 422 ? 400 : e.status();
        return new MooncakeJsonError(status, MooncakeJsonError.INVALID_REQUEST, e.getMessage(), null);
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
