package dev.kvindexer.selectservice;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.concurrent.CompletionStage;

/** Brings a result back to the context that owns the selection state, whatever thread completed it. */
final class ContextHop {
    private ContextHop() {
    }

    static <T> Future<T> on(Context home, Future<T> f) {
        Promise<T> p = Promise.promise();
        f.onComplete(ar -> home.runOnContext(v -> p.handle(ar)));
        return p.future();
    }

    static <T> Future<T> on(Context home, CompletionStage<T> stage) {
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
