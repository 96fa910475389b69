package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntPredicate;

/**
 * Threads that read a prefix length over and over while a writer first only grows it, then only shrinks it: each
 * checks that what it reads only grows while the writer grows it and only shrinks after, so a reader never sees a
 * state the writes did not go through. The writer calls {@link #shrinking()} between its two phases and
 * {@link #stop()} at the end, which rethrows any reader's failure.
 */
public final class PrefixReaders {
    /** One read of the prefix length. */
    public interface Read {
        int read() throws Exception;
    }

    private final AtomicBoolean growing = new AtomicBoolean(true);
    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();
    private final int[] answers;

    /** Starts {@code count} readers; {@code valid} also checks each length read (true when it may be seen). */
    public PrefixReaders(int count, Read read, IntPredicate valid) {
        answers = new int[count];
        for (int t = 0; t < count; t++) {
            int me = t;
            threads.add(new Thread(() -> {
                int last = -1;
                boolean shrinkSeen = false;
                try {
                    while (!done.get()) {
                        boolean growingBefore = growing.get();
                        int n = read.read();
                        assertTrue(valid.test(n), "a state the writes never made: " + n);
                        // Removals start only once the flag is down: a read that ends with it still up saw none,
                        // and one that starts with it down saw every store.
                        if (growing.get()) {
                            assertTrue(n >= last, "a growing prefix went from " + last + " to " + n);
                            last = n;
                        } else if (!growingBefore) {
                            assertTrue(!shrinkSeen || n <= last, "a shrinking prefix went from " + last + " to " + n);
                            shrinkSeen = true;
                            last = n;
                        }
                        answers[me]++;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        threads.forEach(Thread::start);
    }

    /** The writer is done growing the prefix and starts shrinking it. */
    public void shrinking() {
        growing.set(false);
    }

    /** Stops the readers, and fails with the first reader's failure, or when a reader was never answered. */
    public void stop() throws InterruptedException {
        done.set(true);
        for (Thread r : threads) {
            r.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        for (int n : answers) {
            assertTrue(n > 0, "every reader was answered");
        }
    }
}
