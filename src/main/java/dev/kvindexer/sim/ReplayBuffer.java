package dev.kvindexer.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The engine's ring of its last published batches (vLLM's {@code buffer_steps}, docs/protocol/zmq.md#replay-protocol).
 * Seqs are consecutive,
 * so the position of any seq is arithmetic. Not thread-safe: owned by the engine thread.
 */
public final class ReplayBuffer {
    public static final int DEFAULT_CAPACITY = 10_000;

    /** One buffered batch. */
    public record Entry(long seq, byte[] payload) {}

    private final Entry[] ring;
    private int size;
    private int oldest;

    public ReplayBuffer() {
        this(DEFAULT_CAPACITY);
    }

    public ReplayBuffer(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        ring = new Entry[capacity];
    }

    /** Appends the next batch, overwriting the oldest when full; {@code seq} must follow the newest one. */
    public void append(long seq, byte[] payload) {
        if (size > 0 && seq != newestSeq() + 1) {
            throw new IllegalArgumentException("seq " + seq + " does not follow " + newestSeq());
        }
        Entry e = new Entry(seq, payload);
        if (size < ring.length) {
            ring[(oldest + size) % ring.length] = e;
            size++;
        } else {
            ring[oldest] = e;
            oldest = (oldest + 1) % ring.length;
        }
    }

    /** Every buffered batch with {@code seq >= start} (unsigned), oldest first. */
    public List<Entry> from(long start) {
        if (size == 0 || Long.compareUnsigned(start, newestSeq()) > 0) {
            return List.of();
        }
        long first = Long.compareUnsigned(start, oldestSeq()) < 0 ? oldestSeq() : start;
        int skip = (int) (first - oldestSeq());
        List<Entry> out = new ArrayList<>(size - skip);
        for (int i = skip; i < size; i++) {
            out.add(ring[(oldest + i) % ring.length]);
        }
        return out;
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return ring.length;
    }

    /** Oldest buffered seq; only meaningful when {@link #size()} > 0. */
    public long oldestSeq() {
        return ring[oldest].seq();
    }

    /** Newest buffered seq; only meaningful when {@link #size()} > 0. */
    public long newestSeq() {
        return ring[(oldest + size - 1) % ring.length].seq();
    }

    public void clear() {
        java.util.Arrays.fill(ring, null);
        size = 0;
        oldest = 0;
    }
}
