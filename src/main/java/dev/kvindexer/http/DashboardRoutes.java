package dev.kvindexer.http;

import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.Responses;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;
import java.util.function.Supplier;

/**
 * The operator's dashboard: a static page from the jar at {@code /} and {@code /ui/}, and {@code GET /overview}, the
 * JSON it reads. The page holds no data, so it loads without a token; everything it fetches is guarded as usual.
 */
final class DashboardRoutes {
    static final String PREFIX = "/ui/";
    private static final String INDEX = "webroot/ui/index.html";
    /** Scripts and styles from this origin only: nothing inline, nothing from elsewhere. */
    private static final String CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

    private DashboardRoutes() {}

    /**
     * Whether a request is for the page itself, which --auth-all lets through so that it can ask for the token. Give it
     * the normalized path, the one routing uses: a raw {@code /ui/../overview} must not pass as the page.
     */
    static boolean isPage(String path) {
        return "/".equals(path) || path.startsWith(PREFIX);
    }

    static void install(Router router, Supplier<Future<String>> overview) {
        router.get("/").handler(DashboardRoutes::index);
        router.route(PREFIX + "*").handler(ctx -> {
            hardened(ctx);
            ctx.next();
        });
        router.get(PREFIX + "*")
                .handler(StaticHandler.create("webroot/ui")
                        .setIndexPage("index.html")
                        .setCachingEnabled(false)
                        .setDefaultContentEncoding("UTF-8"));
        router.get("/overview")
                .handler(ctx -> overview.get().onComplete(ar -> {
                    if (ar.succeeded()) {
                        Responses.json(ctx, 200, ar.result());
                    } else {
                        Responses.error(
                                ctx,
                                new HttpError(
                                        500, "overview failure: " + ar.cause().getMessage()));
                    }
                }));
    }

    private static void index(RoutingContext ctx) {
        hardened(ctx);
        ctx.response().putHeader("content-type", "text/html; charset=utf-8").sendFile(INDEX);
    }

    private static void hardened(RoutingContext ctx) {
        ctx.response()
                .putHeader("content-security-policy", CSP)
                .putHeader("x-content-type-options", "nosniff")
                .putHeader("cache-control", "no-cache");
    }
}
