package dev.kvindexer.zmq.zmtp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * Looks host names up off the polling threads, so a slow DNS cannot stall every other endpoint of one: on two
 * shared threads that exist only while there is something to look up.
 */
final class ZmtpLookups {
    private static final ThreadPoolExecutor POOL = pool();

    private ZmtpLookups() {}

    private static ThreadPoolExecutor pool() {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "kvindexer-zmtp-lookup-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** Resolves {@code address}; {@code then} gets the result or the failure, on a lookup thread. */
    static void resolve(ZmtpAddress.Tcp address, BiConsumer<InetSocketAddress, Throwable> then) {
        CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return address.resolve();
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        },
                        POOL)
                .whenComplete((resolved, error) -> then.accept(resolved, rootCause(error)));
    }

    private static Throwable rootCause(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof UncheckedIOException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
