package dev.kvindexer.cli;

import java.util.concurrent.CountDownLatch;

/** Keeps a service command running until the JVM is asked to stop (SIGTERM, Ctrl-C), then runs its close step. */
final class UntilShutdown {
    private UntilShutdown() {
    }

    static void await(String threadName, Runnable close) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                close.run();
            } finally {
                stopped.countDown();
            }
        }, threadName));
        stopped.await();
    }
}
