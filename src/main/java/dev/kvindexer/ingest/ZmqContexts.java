package dev.kvindexer.ingest;

import java.lang.Thread.UncaughtExceptionHandler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;

/**
 * Creates the JeroMQ contexts of replays and closes them with a bounded wait. A context's close waits for its I/O
 * thread, which never returns once that thread has died, so no caller may ever wait on it unbounded.
 */
final class ZmqContexts {
    private static final Logger LOG = LoggerFactory.getLogger(ZmqContexts.class);

    private ZmqContexts() {}

    /**
     * A context with one I/O thread whose death is reported to {@code ioThreadDied}. The handlers must be set before
     * the first socket starts the I/O thread.
     */
    static ZContext create(UncaughtExceptionHandler ioThreadDied) {
        ZContext ctx = new ZContext(1);
        ctx.setLinger(0);
        ctx.setUncaughtExceptionHandler(ioThreadDied);
        // Recoverable errors inside the I/O loop; JeroMQ's default prints a stack trace to stderr.
        ctx.setNotificationExceptionHandler(
                (t, e) -> LOG.debug("ZMQ I/O thread {} recovered from {}", t.getName(), e.toString()));
        return ctx;
    }

    /** Closes {@code ctx} on a daemon thread and waits at most {@code budget}; true when it closed in time. */
    static boolean closeWithin(ZContext ctx, Duration budget, String name) {
        CountDownLatch closed = new CountDownLatch(1);
        Thread closer = new Thread(
                () -> {
                    try {
                        ctx.close();
                    } catch (RuntimeException e) {
                        LOG.debug("closing ZMQ context {}: {}", name, e.toString());
                    } finally {
                        closed.countDown();
                    }
                },
                name + "-close");
        closer.setDaemon(true);
        closer.start();
        try {
            if (closed.await(Math.max(budget.toMillis(), 1), TimeUnit.MILLISECONDS)) {
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.warn("the ZMQ context of {} did not close within {}; abandoned", name, budget);
        return false;
    }
}
