package dev.kvindexer.ingest;

/**
 * What one replay delivered, classified with the reference's incomplete reasons
 * (docs/protocol/zmq.md#sequence-tracking-and-gap-rules): {@code empty},
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
    private long outOfRange;
    private long firstOutOfRange;

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

    /** A batch outside [start, end): skipped, and named in the description. */
    void outOfRange(long seq) {
        if (outOfRange++ == 0) {
            firstOutOfRange = seq;
        }
    }

    void timedOut() {
        failure = "timeout";
    }

    void failed(String error) {
        failure = "error: " + error;
    }

    /** Null when every batch of [start, end) arrived in order (for an open end: none, or from start on in order). */
    String incompleteReason() {
        if (count == 0) {
            if (failure != null) {
                return failure;
            }
            // An open-ended catch-up (after a start from the data directory) asks for whatever the engine published
            // after the watermark: when that is nothing, only the end marker is the whole answer, not a short one.
            return end == dev.kvindexer.partition.ReplayRequest.OPEN_END && outOfRange == 0 ? null : "empty";
        }
        if (Long.compareUnsigned(first, start) > 0) {
            return "started_after_requested";
        }
        if (!contiguous) {
            return "non_contiguous";
        }
        if (end != dev.kvindexer.partition.ReplayRequest.OPEN_END && Long.compareUnsigned(last, end - 1) < 0) {
            return failure != null ? failure : "ended_before_target";
        }
        return null;
    }

    String describeReceived() {
        String received = count == 0
                ? "received=none"
                : "received=[" + Long.toUnsignedString(first) + ", " + Long.toUnsignedString(last) + "] count=" + count;
        return outOfRange == 0
                ? received
                : received + " skipped_out_of_range=" + outOfRange + " (first seq "
                        + Long.toUnsignedString(firstOutOfRange) + ")";
    }
}
