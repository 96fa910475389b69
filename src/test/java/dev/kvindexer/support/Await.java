package dev.kvindexer.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition with a deadline instead of sleeping a fixed time. */
public final class Await {
    /**
     * How long a test waits for what should happen at once (an answer, a refused connection closing). Generous, as
     * the build runs its test JVMs side by side on small machines; a wait ends as soon as its condition holds.
     */
    public static final Duration PATIENCE = Duration.ofSeconds(30);

    private Await() {}

    public static void until(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }

    /** Polls until {@code supplier} returns {@code expected}; fails with the last value seen. */
    public static <T> void equal(String what, Duration timeout, T expected, Supplier<T> supplier) {
        Object[] last = new Object[1];
        try {
            until(what, timeout, () -> {
                last[0] = supplier.get();
                return expected.equals(last[0]);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nexpected: " + expected + "\nlast seen: " + last[0], e);
        }
    }
}
