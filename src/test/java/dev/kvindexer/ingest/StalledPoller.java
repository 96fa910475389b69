package dev.kvindexer.ingest;

import java.util.concurrent.CountDownLatch;

/** Holds the poller thread of a listener in a call that does not return, as a hung decoder would, until released. */
public final class StalledPoller implements AutoCloseable {
    private final CountDownLatch release = new CountDownLatch(1);

    private StalledPoller() {}

    /** Stalls the poller that serves {@code listener}; returns once it is stalled. */
    public static StalledPoller of(ZmqIngest ingest, Listener listener) throws InterruptedException {
        StalledPoller stalled = new StalledPoller();
        CountDownLatch entered = new CountDownLatch(1);
        ingest.threadOf(listener).execute(() -> {
            entered.countDown();
            boolean released = false;
            while (!released) {
                try {
                    stalled.release.await();
                    released = true;
                } catch (InterruptedException e) {
                    // Stalled means stalled: only the release ends the wait.
                }
            }
        });
        entered.await();
        return stalled;
    }

    /** Lets the poller go on. */
    @Override
    public void close() {
        release.countDown();
    }
}
