package dev.kvindexer.http;

import dev.kvindexer.metrics.PrometheusText;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Supplier;

/** {@code GET /metrics}: the page the node renders, as Prometheus text. */
final class MetricsRoute {
    private final Supplier<Future<String>> page;

    MetricsRoute(Supplier<Future<String>> page) {
        this.page = page;
    }

    void get(RoutingContext ctx) {
        page.get().onComplete(ar -> {
            if (ar.succeeded()) {
                ctx.response()
                        .setStatusCode(200)
                        .putHeader("content-type", PrometheusText.CONTENT_TYPE)
                        .end(ar.result());
            } else {
                Responses.error(
                        ctx, new HttpError(500, "metrics failure: " + ar.cause().getMessage()));
            }
        });
    }
}
