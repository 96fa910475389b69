package dev.kvindexer.web;

import io.vertx.core.Handler;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Set;

/**
 * The first handler of each service's router: it logs and measures every request when its answer ends, refuses
 * before routing what no route may read (an oversized body, a bad query string), and for a service that speaks
 * msgpack answers in it when the request's Accept asks.
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
    private volatile Set<String> routes = Set.of();

    /**
     * @param unknownRoute   the label of a request for a path no route serves
     * @param accessLog      where every request is logged, or null
     * @param msgpackAnswers whether an Accept asking for msgpack turns every JSON answer into msgpack
     */
    private RequestPreamble(String unknownRoute, Observer observer, AccessLog accessLog, boolean msgpackAnswers) {
        this.unknownRoute = unknownRoute;
        this.observer = observer;
        this.accessLog = accessLog;
        this.msgpackAnswers = msgpackAnswers;
    }

    /** Installs the preamble as {@code router}'s first handler; call {@link #labelRoutes} once its routes are added. */
    public static RequestPreamble install(
            Router router, String unknownRoute, Observer observer, AccessLog accessLog, boolean msgpackAnswers) {
        RequestPreamble preamble = new RequestPreamble(unknownRoute, observer, accessLog, msgpackAnswers);
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

    @Override
    public void handle(RoutingContext ctx) {
        if (accessLog != null) {
            accessLog.track(ctx);
        }
        long start = System.nanoTime();
        ctx.addBodyEndHandler(v -> observer.answered(
                label(ctx), ctx.request().method().name(), ctx.response().getStatusCode(), System.nanoTime() - start));
        if (JsonRoutes.refusedBeforeRouting(ctx)) {
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
}
