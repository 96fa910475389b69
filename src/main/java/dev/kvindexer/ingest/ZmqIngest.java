package dev.kvindexer.ingest;

import dev.kvindexer.event.Refusal;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.InFlightBatches;
import dev.kvindexer.zmq.zmtp.ZmtpConfig;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's ZMQ ingest: a fixed pool of {@link PollerThread}s sharing all listeners, so thousands of engines never
 * mean thousands of threads, and at most {@link Config#maxListeners()} listeners, each holding one connection. A
 * supervisor replaces a poller whose thread died: its listeners show {@code failed} with the cause, are opened again
 * on the replacement, and gap replay fetches what was missed.
 */
public final class ZmqIngest implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ZmqIngest.class);
    /** How long an abandoned poller gets to close its connections before its commands move on. */
    private static final Duration THREAD_STOP_WAIT = Duration.ofSeconds(2);

    private static final Duration DEFAULT_CLOSE_BUDGET = Duration.ofSeconds(5);

    /**
     * @param threads            poller threads
     * @param maxInFlightBatches bound on decoded batches sent but not yet taken by partitions
     * @param maxEventBytes      largest ZMQ message taken from an engine
     * @param superviseEvery     how often dead pollers are looked for
     * @param maxListeners       listeners run at once; a start beyond fails with a {@link Refusal} ({@code FULL})
     * @param messageTimeout     a frame or message from an engine must arrive whole this long after its first byte
     */
    public record Config(
            int threads,
            int maxInFlightBatches,
            long maxEventBytes,
            Duration superviseEvery,
            int maxListeners,
            Duration messageTimeout) {
        public static final Duration SUPERVISE_EVERY = Duration.ofSeconds(1);
        public static final Duration MESSAGE_TIMEOUT = Duration.ofSeconds(15);

        public Config {
            if (maxListeners < 1) {
                throw new IllegalArgumentException("--max-listeners must be at least 1");
            }
        }

        public Config(
                int threads, int maxInFlightBatches, long maxEventBytes, Duration superviseEvery, int maxListeners) {
            this(threads, maxInFlightBatches, maxEventBytes, superviseEvery, maxListeners, MESSAGE_TIMEOUT);
        }

        /** With the listener ceiling this process's descriptor limit allows ({@link ListenerCapacity#derived()}). */
        public Config(int threads, int maxInFlightBatches, long maxEventBytes, Duration superviseEvery) {
            this(threads, maxInFlightBatches, maxEventBytes, superviseEvery, ListenerCapacity.derived());
        }
    }

    private final Vertx vertx;
    private final Config settings;
    private final EventCounters counters;
    private final NetworkBudget budget;
    private final BooleanSupplier gateOpen;
    private final Spans spans;
    /** Replaced under this object's lock; read without it (a stale read sees the old thread, which is harmless). */
    private volatile PollerThread[] threads;

    private final Map<Listener, PollerThread> owners = new ConcurrentHashMap<>();
    private final InFlightBatches inFlight;
    private final ReplayClient replays;
    private final ScheduledExecutorService supervisor;
    private final AtomicLong restarts = new AtomicLong();
    /** Why ingest is not fully serving, or null; set from a poller's failure until its listeners are open again. */
    private volatile String degraded;

    private int pendingReopens;
    private boolean closed;

    /**
     * @param gateOpen  false while the node recovers: listeners connect and buffer until it turns true
     */
    public ZmqIngest(Vertx vertx, Config settings, EventCounters counters, BooleanSupplier gateOpen) {
        this(vertx, settings, counters, NetworkBudget.unbounded(), gateOpen);
    }

    /**
     * @param budget    what every connection's buffered bytes are reserved from
     * @param gateOpen  false while the node recovers: listeners connect and buffer until it turns true
     */
    public ZmqIngest(
            Vertx vertx, Config settings, EventCounters counters, NetworkBudget budget, BooleanSupplier gateOpen) {
        this(vertx, settings, counters, budget, gateOpen, Spans.OFF);
    }

    /**
     * @param budget    what every connection's buffered bytes are reserved from
     * @param gateOpen  false while the node recovers: listeners connect and buffer until it turns true
     * @param spans     where the ingest batches sampled for tracing get their traces
     */
    public ZmqIngest(
            Vertx vertx,
            Config settings,
            EventCounters counters,
            NetworkBudget budget,
            BooleanSupplier gateOpen,
            Spans spans) {
        this.spans = spans;
        this.vertx = vertx;
        this.settings = settings;
        this.counters = counters;
        this.budget = budget;
        this.gateOpen = gateOpen;
        this.inFlight = new InFlightBatches(settings.maxInFlightBatches(), budget);
        this.replays = new ReplayClient(
                counters,
                this::running,
                2,
                ZmtpConfig.defaults(settings.maxEventBytes()).withMessageTimeout(settings.messageTimeout()),
                budget,
                inFlight);
        this.threads = new PollerThread[settings.threads()];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = newThread(i);
        }
        supervisor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvindexer-ingest-supervisor");
            t.setDaemon(true);
            return t;
        });
        long every = settings.superviseEvery().toMillis();
        supervisor.scheduleWithFixedDelay(this::superviseGuarded, every, every, TimeUnit.MILLISECONDS);
    }

    private PollerThread newThread(int index) {
        PollerThread t = new PollerThread(
                "kvindexer-ingest-" + index,
                settings.maxEventBytes(),
                counters,
                inFlight,
                budget,
                settings.messageTimeout(),
                gateOpen,
                spans);
        t.start();
        return t;
    }

    /**
     * Lets a listener started {@linkplain Listener#hold() held} deliver: its batches, buffered since it
     * subscribed, reach its partition in order from now on.
     */
    public synchronized void release(Listener listener) {
        listener.release();
        PollerThread t = owners.get(listener);
        if (t != null) {
            t.release(listener);
        }
    }

    /**
     * Starts receiving for the listener on the least loaded thread; completes once its connection is under way or
     * failed. Fails with a {@link Refusal} ({@code FULL}) when {@link #listenerCapacity()} listeners run already.
     */
    public synchronized Future<Void> start(Listener listener) {
        Promise<Void> done = Promise.promise();
        if (closed) {
            return Future.failedFuture("ingest is closed");
        }
        if (owners.size() >= settings.maxListeners() && !owners.containsKey(listener)) {
            return Future.failedFuture(Refusal.full(
                    "listener limit reached: " + settings.maxListeners() + " listeners (--max-listeners)"));
        }
        PollerThread t = threads[0];
        for (PollerThread candidate : threads) {
            if (candidate.load() < t.load()) {
                t = candidate;
            }
        }
        owners.put(listener, t);
        t.add(listener, done);
        return done.future();
    }

    /** Shows {@code error} as the last_error of the listener running for stream (worker, dp_rank), if one runs. */
    public void recordError(long workerId, int dpRank, String error) {
        Listener l = running(workerId, dpRank);
        if (l != null) {
            l.recordError(error);
        }
    }

    /** The listener this ingest runs for stream (worker, dp_rank), or null: where a failed replay shows. */
    private Listener running(long workerId, int dpRank) {
        for (Listener l : owners.keySet()) {
            if (l.sink() instanceof PartitionSink && l.workerId() == workerId && l.dpRank() == dpRank) {
                return l;
            }
        }
        return null;
    }

    /** Closes the listener's socket; completes when nothing more will be received from it. */
    public synchronized Future<Void> stop(Listener listener) {
        PollerThread t = owners.remove(listener);
        if (t == null || closed) {
            return Future.succeededFuture();
        }
        Promise<Void> done = Promise.promise();
        t.remove(listener, done);
        return done.future();
    }

    /**
     * Why ingest is not fully serving, or null: a poller failed and the supervisor has not replaced it yet, or its
     * listeners are being opened again on the replacement.
     */
    public String degradedReason() {
        for (PollerThread t : threads) {
            String failure = t.failure();
            if (failure != null) {
                return failure;
            }
        }
        return degraded;
    }

    /** Pollers replaced after a failure since the node started. */
    public long restarts() {
        return restarts.get();
    }

    public int threadCount() {
        return threads.length;
    }

    /** Listeners started and not stopped. */
    public int listenerCount() {
        return owners.size();
    }

    /** The most listeners this ingest runs at once. */
    public int listenerCapacity() {
        return settings.maxListeners();
    }

    public InFlightBatches inFlight() {
        return inFlight;
    }

    public ReplayClient replays() {
        return replays;
    }

    /** A scheduled task that throws is never run again: supervision must outlive any one failed round. */
    private void superviseGuarded() {
        try {
            supervise();
        } catch (RuntimeException e) {
            LOG.error("ingest supervision round failed", e);
        } catch (Error e) {
            PollerThread.forwardToDefaultHandler(Thread.currentThread(), e);
        }
    }

    /** One supervision round: every poller that failed is replaced. */
    synchronized void supervise() {
        if (closed) {
            return;
        }
        for (int i = 0; i < threads.length; i++) {
            String failure = threads[i].failure();
            if (failure != null) {
                try {
                    replace(i, failure);
                } catch (RuntimeException e) {
                    // Keep supervising: the next round tries again.
                    LOG.error("replacing ingest thread {} failed", i, e);
                }
            }
        }
    }

    /** Test access: the poller that serves {@code listener}. */
    synchronized PollerThread threadOf(Listener listener) {
        return owners.get(listener);
    }

    private void replace(int index, String failure) {
        PollerThread dead = threads[index];
        dead.shutdown();
        PollerThread fresh = newThread(index);
        PollerThread[] next = threads.clone();
        next[index] = fresh;
        threads = next;
        restarts.incrementAndGet();
        List<Listener> moved = new ArrayList<>();
        owners.forEach((l, t) -> {
            if (t == dead) {
                moved.add(l);
            }
        });
        String reason = "ingest thread " + dead.getName() + " failed (" + failure + "); resubscribing";
        degraded = reason + " " + moved.size() + " listeners";
        LOG.error("{} {} listeners", reason, moved.size());
        List<Future<Void>> reopened = new ArrayList<>();
        for (Listener l : moved) {
            // Failed, with the cause, until the replacement's socket connects again.
            l.markFailed(reason);
            owners.put(l, fresh);
            Promise<Void> done = Promise.promise();
            reopened.add(done.future());
            fresh.add(l, done);
        }
        // Commands the dead thread never ran: opens move to the replacement, closes are done already.
        Thread abandon = new Thread(
                () -> {
                    waitForStop(dead);
                    for (PollerThread.Command c : dead.takePending()) {
                        if (c instanceof PollerThread.Add a) {
                            moveOpen(a, fresh);
                        } else if (c instanceof PollerThread.Remove r) {
                            r.done().complete();
                        }
                    }
                },
                dead.getName() + "-abandon");
        abandon.setDaemon(true);
        abandon.start();
        pendingReopens++;
        Future.join(reopened).onComplete(ar -> reopened());
    }

    private synchronized void moveOpen(PollerThread.Add a, PollerThread fresh) {
        if (closed || owners.get(a.listener()) == null) {
            a.done().complete();
            return;
        }
        owners.put(a.listener(), fresh);
        fresh.add(a.listener(), a.done());
    }

    private synchronized void reopened() {
        if (--pendingReopens == 0) {
            degraded = null;
        }
    }

    private static void waitForStop(PollerThread t) {
        try {
            t.join(THREAD_STOP_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops the pollers and replays within {@code budget}: a poller stuck in a call that does not return is left
     * behind (its thread is a daemon), and shutdown does not hang on it.
     */
    public void close(Duration budget) {
        long deadline = System.nanoTime() + budget.toNanos();
        synchronized (this) {
            closed = true;
        }
        supervisor.shutdownNow();
        replays.close();
        for (PollerThread t : threads) {
            t.shutdown();
        }
        for (PollerThread t : threads) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            t.takePending().forEach(c -> {
                try {
                    if (c instanceof PollerThread.Add a) {
                        a.done().complete();
                    } else if (c instanceof PollerThread.Remove r) {
                        r.done().complete();
                    }
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // Vert.x has closed already, so whoever waited on this step can no longer be told; nothing to do.
                }
            });
        }
    }

    @Override
    public void close() {
        close(DEFAULT_CLOSE_BUDGET);
    }
}
