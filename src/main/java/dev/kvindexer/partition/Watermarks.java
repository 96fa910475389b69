package dev.kvindexer.partition;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The last applied seq of every stream the node has seen. Node-wide, because a watermark outlives an
 * unregister and even its partition's removal: a re-registered stream resumes from it (seed 000).
 * Each entry is written only by the partition actor that currently owns the stream.
 */
public final class Watermarks {
    /** Mutable holder; UNSET until the stream applied a batch. */
    public static final class Watermark {
        private volatile long seq;
        private volatile boolean set;

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
        }
    }

    private final ConcurrentHashMap<StreamId, Watermark> marks = new ConcurrentHashMap<>();

    public Watermark of(StreamId stream) {
        return marks.computeIfAbsent(stream, k -> new Watermark());
    }

    /** The watermark if the stream has applied anything, else -1 (for tests and snapshots). */
    public long seqOrMinusOne(StreamId stream) {
        Watermark w = marks.get(stream);
        return w == null || !w.isSet() ? -1 : w.seq();
    }
}
