package dev.kvindexer.web;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.concurrent.CompletionStage;

/** Brings a result back to the context that owns some single-threaded state, whatever thread completed it. */
public final class ContextHop {
    private ContextHop() {}

    public static <T> Future<T> on(Context home, Future<T> f) {
        Promise<T> p = Promise.promise();
        f.onComplete(ar -> home.runOnContext(v -> p.handle(ar)));
        return p.future();
    }

    public static <T> Future<T> on(Context home, CompletionStage<T> stage) {
        Promise<T> p = Promise.promise();
        stage.whenComplete((v, t) -> home.runOnContext(x -> {
            if (t != null) {
                p.fail(t);
            } else {
                p.complete(v);
            }
        }));
        return p.future();
    }
}
