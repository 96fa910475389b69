package dev.kvindexer.partition;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The last applied seq of every stream the node has seen. Node-wide, because a watermark outlives an
 * unregister and even its partition's removal: a re-registered stream resumes from it (seed 000).
 * Each entry is written only by the partition actor that currently owns the stream.
 */
public final class Watermarks {
    /**
     * Mutable holder; UNSET until the stream applied a batch. It also says whether the index holds the stream
     * exactly: batches the engine sent and no replay could bring back make it inexact until its blocks start over
     * (an engine restart, a removal) or a peer's exact copy replaces them.
     */
    public static final class Watermark {
        private volatile long seq;
        private volatile boolean set;
        private volatile long lostBatches;

        public boolean isSet() {
            return set;
        }

        public long seq() {
            return seq;
        }

        void advance(long value) {
            seq = value;
            set = true;
        }

        void reset() {
            set = false;
            lostBatches = 0;
        }

        /** False once batches were lost for good since the stream's blocks last started over. */
        public boolean exact() {
            return lostBatches == 0;
        }

        /** Batches lost for good since the stream's blocks last started over: 0 when it is exact. */
        public long lostBatches() {
            return lostBatches;
        }

        /**
         * Adds {@code batches} lost (at least one); the count saturates at {@code Long.MAX_VALUE} so it stays
         * positive, as snapshots carry it.
         */
        void lost(long batches) {
            long sum = lostBatches + Math.max(batches, 1);
            lostBatches = sum < 0 ? Long.MAX_VALUE : sum;
        }

        /** The stream's blocks were replaced by an exact copy (a peer's) or a snapshot that says how exact they are. */
        void exactAgain(long lost) {
            lostBatches = lost;
        }
    }

    private final ConcurrentHashMap<StreamId, Watermark> marks = new ConcurrentHashMap<>();

    /**
     * How many batches seqs {@code start} (inclusive) to {@code end} (exclusive) span, unsigned as seqs are: a
     * publisher's seqs can jump anywhere, so a span past {@code Long.MAX_VALUE} counts as that.
     */
    static long batchesBetween(long start, long end) {
        long n = end - start;
        return n < 0 ? Long.MAX_VALUE : n;
    }

    public Watermark of(StreamId stream) {
        return marks.computeIfAbsent(stream, k -> new Watermark());
    }

    /** The stream's watermark, or null when the node has never seen the stream. */
    public Watermark find(StreamId stream) {
        return marks.get(stream);
    }

    /** Streams that lost batches for good (see {@link Watermark#exact()}). */
    public long inexactStreams() {
        return marks.values().stream().filter(w -> !w.exact()).count();
    }

    /** The watermark if the stream has applied anything, else -1 (for tests and snapshots). */
    public long seqOrMinusOne(StreamId stream) {
        Watermark w = marks.get(stream);
        return w == null || !w.isSet() ? -1 : w.seq();
    }
}
