package dev.kvindexer.metrics;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Keeps a recurring warning of one source (a stream, a listener) to one log line per interval: the first occurrence
 * of an interval is logged with the number held back since the last line, the rest are only counted. Counters in
 * /metrics keep the exact figures; the log only has to say that it happens and how often. Not thread-safe: one per
 * source, used by the thread that owns the source.
 */
public final class LogThrottle {
    public static final long DEFAULT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final long intervalNanos;
    private final LongSupplier clock;
    private long lastLogged;
    private boolean logged;
    private long held;

    public LogThrottle() {
        this(DEFAULT_INTERVAL_NANOS, System::nanoTime);
    }

    public LogThrottle(long intervalNanos, LongSupplier clock) {
        this.intervalNanos = intervalNanos;
        this.clock = clock;
    }

    /**
     * Whether this occurrence gets a log line. When it does, {@link #heldBack()} tells how many were held back before
     * it; when it does not, it is counted as held back.
     */
    public boolean admit() {
        long now = clock.getAsLong();
        if (!logged || now - lastLogged >= intervalNanos) {
            logged = true;
            lastLogged = now;
            return true;
        }
        held++;
        return false;
    }

    /** Occurrences held back since the last admitted one; resets the count. Call after {@link #admit()} said yes. */
    public long heldBack() {
        long n = held;
        held = 0;
        return n;
    }

    /** The suffix for an admitted line: empty, or how many similar lines were held back. */
    public String heldBackNote() {
        long n = heldBack();
        return n == 0 ? "" : " (" + n + " more since the last report)";
    }
}
