package dev.kvindexer.ingest;

/**
 * What one replay delivered, classified with the reference's incomplete reasons (SPEC §3.6): {@code empty},
 * {@code started_after_requested}, {@code non_contiguous}, {@code ended_before_target}, plus {@code timeout}
 * and {@code error} for replies that never came.
 */
final class ReplayOutcome {
    private final long start;
    private final long end;
    private long first;
    private long last;
    private long count;
    private boolean contiguous = true;
    private String failure;

    ReplayOutcome(long start, long end) {
        this.start = start;
        this.end = end;
    }

    void received(long seq) {
        if (count == 0) {
            first = seq;
        } else if (seq != last + 1) {
            contiguous = false;
        }
        last = seq;
        count++;
    }

    void timedOut() {
        failure = "timeout";
    }

    void failed(String error) {
        failure = "error: " + error;
    }

    /** Null when every batch of [start, end) arrived in order. */
    String incompleteReason() {
        if (count == 0) {
            return failure != null ? failure : "empty";
        }
        if (Long.compareUnsigned(first, start) > 0) {
            return "started_after_requested";
        }
        if (!contiguous) {
            return "non_contiguous";
        }
        if (Long.compareUnsigned(last, end - 1) < 0) {
            return failure != null ? failure : "ended_before_target";
        }
        return null;
    }

    String describeReceived() {
        return count == 0 ? "received=none"
                : "received=[" + Long.toUnsignedString(first) + ", " + Long.toUnsignedString(last) + "] count=" + count;
    }
}
