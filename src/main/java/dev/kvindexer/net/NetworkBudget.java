package dev.kvindexer.net;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The node-wide bound on bytes held for the network: frames and messages received in part or waiting to be applied,
 * replies queued for a peer that does not read. Every port reserves before it holds and releases when it lets go, so
 * whatever peers send, together they never hold more than {@link #limit()}. A port whose reservation fails drops or
 * refuses that connection and says so through {@link #refused}.
 *
 * <p>A reservation that takes one connection past {@link #LARGE_HOLDING} bytes must leave a quarter of the budget
 * free: a peer with one huge message in flight can never starve the many small ones of honest peers.
 */
public final class NetworkBudget {
    /** Port names, as they appear in {@code kvindexer_network_refused_total{port}}. */
    public static final String ZMQ = "zmq";

    public static final String BUS = "bus";
    public static final String MEMBER = "member";
    public static final String HTTP = "http";
    public static final String REPLAY = "replay";
    public static final String REPLICA_SYNC = "replica_sync";
    public static final String GRPC = "grpc";

    /** One connection holding more than this holds a large message, which must leave the small ones room. */
    public static final long LARGE_HOLDING = 1 << 20;

    private final long limit;
    private final AtomicLong held = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();
    private final Map<String, LongAdder> refusals = new ConcurrentHashMap<>();
    private volatile long lastRefusalNanos;
    private volatile boolean everRefused;

    public NetworkBudget(long limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("the network budget must be at least 1 byte, got " + limit);
        }
        this.limit = limit;
        for (String port : new String[] {ZMQ, BUS, MEMBER, HTTP, REPLAY, REPLICA_SYNC}) {
            refusals.put(port, new LongAdder());
        }
    }

    /** A budget no test or tool ever reaches: for components run outside a node. */
    public static NetworkBudget unbounded() {
        return new NetworkBudget(Long.MAX_VALUE / 4);
    }

    /**
     * Reserves {@code bytes} for a connection that holds {@code holding} bytes already; false, with nothing
     * reserved, when the budget cannot give them.
     */
    public boolean tryReserve(long bytes, long holding) {
        if (bytes <= 0) {
            return true;
        }
        long ceiling = holding + bytes > LARGE_HOLDING ? limit - limit / 4 : limit;
        while (true) {
            long h = held.get();
            if (h + bytes > ceiling) {
                return false;
            }
            if (held.compareAndSet(h, h + bytes)) {
                long now = h + bytes;
                long p = peak.get();
                while (now > p && !peak.compareAndSet(p, now)) {
                    p = peak.get();
                }
                return true;
            }
        }
    }

    /** Gives back what a reservation took. */
    public void release(long bytes) {
        if (bytes > 0) {
            held.addAndGet(-bytes);
        }
    }

    /** A connection on {@code port} was dropped or refused because the budget could not hold what it sent. */
    public void refused(String port) {
        refusals.computeIfAbsent(port, k -> new LongAdder()).increment();
        lastRefusalNanos = System.nanoTime();
        everRefused = true;
    }

    /**
     * Whether readers that can wait should: more than half the budget is held, so a connection with messages waiting
     * to be applied stops reading (its peer's socket buffers and queues take the rest) before anything is refused.
     */
    public boolean tight() {
        return held.get() > limit / 2;
    }

    /**
     * Why the node cannot take what the network sends right now, or null: the budget is nearly all held and refused a
     * connection within the last {@code windowNanos}.
     */
    public String problem(long windowNanos) {
        long h = held.get();
        if (everRefused && System.nanoTime() - lastRefusalNanos < windowNanos && h > limit - limit / 8) {
            return "network budget full: " + h + " of " + limit + " bytes held for the network (--max-network-memory)";
        }
        return null;
    }

    public long limit() {
        return limit;
    }

    public long held() {
        return held.get();
    }

    /** The most ever held at once. */
    public long peak() {
        return peak.get();
    }

    /** Connections dropped or refused for the budget, by port. */
    public Map<String, Long> refusals() {
        Map<String, Long> out = new TreeMap<>();
        refusals.forEach((port, n) -> out.put(port, n.sum()));
        return out;
    }

    public long refusals(String port) {
        LongAdder n = refusals.get(port);
        return n == null ? 0 : n.sum();
    }
}
