package dev.kvindexer.cluster;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.Supplier;

/** Runs asynchronous tasks one after another: each starts when the previous one's future has completed. */
final class SerialQueue {
    private Future<Void> tail = Future.succeededFuture();

    synchronized <T> Future<T> submit(Supplier<Future<T>> task) {
        Promise<T> result = Promise.promise();
        tail = tail.transform(ignored -> {
            Future<T> f;
            try {
                f = task.get();
            } catch (RuntimeException e) {
                f = Future.failedFuture(e);
            }
            f.onComplete(result);
            return f.transform(done -> Future.<Void>succeededFuture());
        });
        return result.future();
    }
}
