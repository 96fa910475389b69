package dev.kvindexer.web;

import dev.kvindexer.metrics.Spans;
import dev.kvindexer.net.NetworkBudget;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Set;

/**
 * The first handler of each service's router: it logs and measures every request when its answer ends, refuses
 * before routing what no route may read (an oversized body, a bad query string), holds a request's body within the
 * network budget, and for a service that speaks msgpack answers in it when the request's Accept asks.
 */
public final class RequestPreamble implements Handler<RoutingContext> {
    /** Told of every answered request: its route label, method, status, and the time from arrival to answer. */
    @FunctionalInterface
    public interface Observer {
        void answered(String route, String method, int status, long nanos);
    }

    private final String unknownRoute;
    private final Observer observer;
    private final AccessLog accessLog;
    private final boolean msgpackAnswers;
    private final NetworkBudget budget;
    private final long maxBody;
    private volatile Set<String> routes = Set.of();

    /**
     * @param unknownRoute   the label of a request for a path no route serves
     * @param accessLog      where every request is logged, or null
     * @param msgpackAnswers whether an Accept asking for msgpack turns every JSON answer into msgpack
     */
    private RequestPreamble(
            String unknownRoute,
            Observer observer,
            AccessLog accessLog,
            boolean msgpackAnswers,
            NetworkBudget budget,
            long maxBody) {
        this.unknownRoute = unknownRoute;
        this.observer = observer;
        this.accessLog = accessLog;
        this.msgpackAnswers = msgpackAnswers;
        this.budget = budget;
        this.maxBody = maxBody;
    }

    /**
     * Installs the preamble as {@code router}'s first handler; call {@link #labelRoutes} once its routes are added.
     * A request's body is held within {@code budget}: as much as it declares, at most {@code maxBody} (the largest
     * any route takes), reserved before it is read and given back when the answer ends.
     */
    public static RequestPreamble install(
            Router router,
            String unknownRoute,
            Observer observer,
            AccessLog accessLog,
            boolean msgpackAnswers,
            NetworkBudget budget,
            long maxBody) {
        RequestPreamble preamble =
                new RequestPreamble(unknownRoute, observer, accessLog, msgpackAnswers, budget, maxBody);
        router.route().handler(preamble);
        return preamble;
    }

    /** The route labels are the router's paths, so the label set stays bounded whatever paths clients send. */
    public void labelRoutes(Router router) {
        routes = router.getRoutes().stream()
                .map(r -> r.getPath())
                .filter(p -> p != null)
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    /** The route's path, its template for a path with parameters (/workers/:worker_id), else the unknown label. */
    private String label(RoutingContext ctx) {
        String path = ctx.request().path();
        if (routes.contains(path)) {
            return path;
        }
        String template = ctx.currentRoute() == null ? null : ctx.currentRoute().getPath();
        return template != null && template.contains(":") && routes.contains(template) ? template : unknownRoute;
    }

    /**
     * Accounts a request answered outside the router ({@link DirectRoute}) as {@link #handle} accounts a routed one,
     * under {@code route}: its span named now, and logged and measured when its answer ends; its {@code body} bytes are
     * held within the budget until then. False, with nothing done, when the budget cannot hold them now: the router
     * then refuses the request its usual way.
     */
    boolean admit(HttpServerRequest request, String route, long body) {
        if (body > 0 && !budget.tryReserve(body, 0)) {
            return false;
        }
        long start = System.nanoTime();
        String method = request.method().name();
        Spans.RequestSpan span = Spans.requestSpan();
        if (span != null) {
            span.routed(method, route);
        }
        HttpServerResponse response = request.response();
        response.bodyEndHandler(v -> {
            observer.answered(route, method, response.getStatusCode(), System.nanoTime() - start);
            if (accessLog != null) {
                accessLog.answered(request, null, start);
            }
        });
        if (body > 0) {
            // the end handler runs also when the connection closes before the answer is written
            response.endHandler(v -> budget.release(body));
        }
        return true;
    }

    @Override
    public void handle(RoutingContext ctx) {
        if (accessLog != null) {
            accessLog.track(ctx);
        }
        long start = System.nanoTime();
        Spans.RequestSpan span = Spans.requestSpan();
        if (span != null) {
            // the route is known once a handler answers; the answer may be written from another context
            ctx.addHeadersEndHandler(v -> span.routed(ctx.request().method().name(), label(ctx)));
        }
        ctx.addBodyEndHandler(v -> observer.answered(
                label(ctx), ctx.request().method().name(), ctx.response().getStatusCode(), System.nanoTime() - start));
        if (JsonRoutes.refusedBeforeRouting(ctx) || !bodyHeld(ctx)) {
            return;
        }
        if (msgpackAnswers) {
            String accept = ctx.request().getHeader("accept");
            if (MsgpackBodies.isMsgpackType(accept)) {
                MsgpackBodies.answerIn(ctx, accept);
            }
        }
        ctx.next();
    }

    /**
     * Reserves the request's body from the budget before it is read: what Content-Length declares, or the largest
     * body a chunked request may have, up to {@link #maxBody}. False, answered 503 with Retry-After and the connection
     * closed, when the budget cannot hold it now.
     */
    private boolean bodyHeld(RoutingContext ctx) {
        long bytes = declaredBody(ctx);
        if (bytes == 0) {
            return true;
        }
        if (!budget.tryReserve(bytes, 0)) {
            budget.refused(NetworkBudget.HTTP);
            ctx.response().putHeader("retry-after", "1").putHeader("connection", "close");
            Responses.error(
                    ctx,
                    503,
                    "the node's network budget (--max-network-memory) cannot hold this request's body now; "
                            + "try again shortly");
            return false;
        }
        ctx.addEndHandler(ended -> budget.release(bytes));
        return true;
    }

    private long declaredBody(RoutingContext ctx) {
        long declared = ContentLength.of(ctx.request());
        if (declared != ContentLength.NONE) {
            return Math.min(declared, maxBody);
        }
        return "chunked".equalsIgnoreCase(ctx.request().getHeader("transfer-encoding")) ? maxBody : 0;
    }
}
