package dev.kvindexer.cli;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Keeps a service command running until the JVM is asked to stop (SIGTERM, Ctrl-C), then runs its close step. */
final class UntilShutdown {
    private static final Logger LOG = LoggerFactory.getLogger(UntilShutdown.class);

    private UntilShutdown() {}

    /**
     * Runs {@code close} on shutdown; if it has not returned after {@code limit}, the process halts anyway, so a stop
     * always ends in an exit whatever a stuck component does.
     */
    static void await(String threadName, Runnable close, Duration limit) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            Thread watchdog = new Thread(
                                    () -> {
                                        try {
                                            Thread.sleep(limit.toMillis());
                                            LOG.error("shutdown did not finish within {}; halting", limit);
                                            Runtime.getRuntime().halt(FatalErrors.EXIT_STATUS);
                                        } catch (InterruptedException e) {
                                            // close finished in time
                                        }
                                    },
                                    threadName + "-watchdog");
                            watchdog.setDaemon(true);
                            watchdog.start();
                            try {
                                close.run();
                            } finally {
                                watchdog.interrupt();
                                stopped.countDown();
                            }
                        },
                        threadName));
        stopped.await();
    }
}
