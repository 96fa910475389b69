package dev.kvindexer.ingest;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.wire.ConductorBatchDecoder;
import dev.kvindexer.wire.EngineBatchDecoder;
import dev.kvindexer.wire.LiveFrames;
import dev.kvindexer.wire.MalformedBatchException;
import io.vertx.core.Promise;
import java.util.function.BooleanSupplier;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import dev.kvindexer.config.ZmqEndpoint;
import dev.kvindexer.partition.InFlightBatches;

/**
 * One ingest thread: owns a JeroMQ context of its own and many SUB sockets in it, polls them together, decodes each
 * live message into an {@link EventBatch} and sends it to the listener's partition. Sockets are created, used and
 * closed only here, because ZMQ sockets are not thread-safe; other threads talk to it through a command queue. Its
 * own context means a failure in its I/O thread reaches only its listeners, and {@link ZmqIngest} replaces it whole.
 */
final class PollerThread extends Thread {
    private static final Logger LOG = LoggerFactory.getLogger(PollerThread.class);
    private static final int POLL_MILLIS = 20;
    /** Messages taken from one socket per round, so one flooding engine cannot starve the others. */
    private static final int MAX_MESSAGES_PER_ROUND = 256;
    private static final int LOGGED_PROBLEMS_PER_STREAM = 3;
    /**
     * JeroMQ retries a lost connection at once (CONNECT_RETRIED follows DISCONNECTED within milliseconds), except after
     * a protocol error, such as a frame over the size limit, after which it drops the endpoint for good. A connection
     * lost for longer than this without a retry is one of those, and the listener opens its socket again.
     */
    static final long PROTOCOL_DROP_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int CONNECTION_EVENTS = ZMQ.EVENT_CONNECTED | ZMQ.EVENT_DISCONNECTED
            | ZMQ.EVENT_CONNECT_RETRIED | ZMQ.EVENT_CONNECT_DELAYED;
    private static final AtomicLong MONITORS = new AtomicLong();

    /** What other threads ask of this one. */
    sealed interface Command permits Add, Remove, Task {
    }

    record Add(Listener listener, Promise<Void> done) implements Command {
    }

    record Remove(Listener listener, Promise<Void> done) implements Command {
    }

    /** Runs on this thread between poll rounds (tests inject failures with it). */
    record Task(Runnable action) implements Command {
    }

    private final ZContext ctx;
    private final long maxEventBytes;
    private final EventCounters counters;
    private final InFlightBatches inFlight;
    private final BooleanSupplier gateOpen;
    private final ConcurrentLinkedQueue<Command> commands = new ConcurrentLinkedQueue<>();
    private final List<Subscription> subscriptions = new ArrayList<>();
    private final AtomicInteger load = new AtomicInteger();
    private volatile boolean running = true;
    /** Why this thread or its I/O thread stopped working, or null while both run. */
    private volatile String failure;
    private ZMQ.Poller poller;
    private boolean pollerStale = true;
    /** Sockets of held subscriptions, as of the last poller rebuild (every change of a hold rebuilds it). */
    private final List<ZMQ.Socket> heldSockets = new ArrayList<>();
    /** Subscriptions whose connection was lost and not yet retried by JeroMQ. */
    private int awaitingRetry;

    /**
     * A listener's SUB, the PAIR that receives the SUB's connection events (so the listener stays pending until its
     * engine is really there, and a connection JeroMQ gave up on is noticed), and the per-stream decoder.
     */
    private final class Subscription {
        final Listener listener;
        final ZMQ.Socket socket;
        final ZMQ.Socket monitor;
        final EngineBatchDecoder decoder;
        int loggedProblems;
        /** System.nanoTime() of a lost connection not yet retried, or 0. */
        long lostAt;
        /** Connected and subscribed, but left for ZMQ to buffer (a shard hand-over installs the history first). */
        boolean held;

        Subscription(Listener listener) {
            this.listener = listener;
            this.held = listener.held();
            this.decoder = listener.conductor() != null ? null
                    : new EngineBatchDecoder(listener.blockSize(), listener.publisher().defaultLora());
            this.socket = ZmqSockets.subscriber(ctx, listener.endpoint(), maxEventBytes);
            ZMQ.Socket pair = null;
            try {
                String monitorAddress = "inproc://kvindexer-monitor-" + MONITORS.incrementAndGet();
                socket.monitor(monitorAddress, CONNECTION_EVENTS);
                pair = ctx.createSocket(SocketType.PAIR);
                pair.connect(monitorAddress);
                ZmqSockets.attach(socket, listener.endpoint());
            } catch (RuntimeException e) {
                if (pair != null) {
                    ctx.destroySocket(pair);
                }
                ctx.destroySocket(socket);
                throw e;
            }
            this.monitor = pair;
        }

        void close() {
            socket.monitor(null, 0);
            ctx.destroySocket(monitor);
            ctx.destroySocket(socket);
        }
    }

    PollerThread(String name, long maxEventBytes, EventCounters counters, InFlightBatches inFlight,
                 BooleanSupplier gateOpen) {
        super(name);
        setDaemon(true);
        this.ctx = ZmqContexts.create((t, e) -> ioThreadDied(t, e));
        this.maxEventBytes = maxEventBytes;
        this.counters = counters;
        this.inFlight = inFlight;
        this.gateOpen = gateOpen;
    }

    int load() {
        return load.get();
    }

    void add(Listener listener, Promise<Void> done) {
        load.incrementAndGet();
        commands.add(new Add(listener, done));
    }

    void remove(Listener listener, Promise<Void> done) {
        commands.add(new Remove(listener, done));
    }

    /** Starts draining a held listener's socket: what ZMQ buffered meanwhile comes first. */
    void release(Listener listener) {
        commands.add(new Task(() -> {
            for (Subscription s : subscriptions) {
                if (s.listener == listener && s.held) {
                    s.held = false;
                    pollerStale = true;
                }
            }
        }));
    }

    /** Runs {@code action} on this thread. */
    void execute(Runnable action) {
        commands.add(new Task(action));
    }

    /** Why this thread no longer serves its listeners, or null while it does. */
    String failure() {
        if (failure == null && running && getState() == State.TERMINATED) {
            return "ingest thread " + getName() + " ended";
        }
        return failure;
    }

    /** Commands that never ran; call once the thread has stopped, to hand them to its successor. */
    List<Command> takePending() {
        List<Command> out = new ArrayList<>();
        Command c;
        while ((c = commands.poll()) != null) {
            out.add(c);
        }
        return out;
    }

    /** Stops the loop; the thread closes its sockets on its way out. */
    void shutdown() {
        running = false;
    }

    ZContext context() {
        return ctx;
    }

    private void ioThreadDied(Thread t, Throwable e) {
        failure = "ZMQ I/O thread " + t.getName() + " died: " + e;
        LOG.error("ZMQ I/O thread {} of {} died; its listeners are resubscribed", t.getName(), getName(), e);
        if (e instanceof VirtualMachineError) {
            // The process-wide policy (the CLI exits) decides what a VM error means.
            forwardToDefaultHandler(t, e);
        }
    }

    @Override
    public void run() {
        try {
            while (running) {
                runCommands();
                if (subscriptions.isEmpty()) {
                    pause();
                    continue;
                }
                if (!gateOpen.getAsBoolean()) {
                    // Startup recovery: let ZMQ buffer. Touching each socket still lets JeroMQ send its
                    // subscription and finish connecting, which it only does on the owning thread.
                    subscriptions.forEach(s -> s.socket.getEvents());
                    pause();
                    continue;
                }
                if (pollerStale) {
                    rebuildPoller();
                }
                for (int i = 0; i < heldSockets.size(); i++) {
                    // As behind the closed gate: JeroMQ finishes connecting and subscribing only when touched.
                    heldSockets.get(i).getEvents();
                }
                if (poller.poll(POLL_MILLIS) > 0) {
                    for (int i = 0; i < subscriptions.size(); i++) {
                        Subscription s = subscriptions.get(i);
                        if (poller.pollin(2 * i + 1)) {
                            connectionEvents(s);
                        }
                        if (poller.pollin(2 * i)) {
                            drain(s);
                        }
                    }
                }
                if (awaitingRetry > 0) {
                    reopenDroppedConnections();
                }
            }
        } catch (Throwable e) {
            failure = "ingest thread " + getName() + " failed: " + e;
            LOG.error("ingest thread {} stopped by an unexpected error; its listeners are resubscribed", getName(), e);
            for (Subscription s : subscriptions) {
                s.listener.markFailed(failure);
            }
            if (e instanceof VirtualMachineError) {
                forwardToDefaultHandler(this, e);
            }
        } finally {
            closeAll();
        }
    }

    /** Hands an error to the process's uncaught-error policy (the command line's exits), if there is one. */
    static void forwardToDefaultHandler(Thread t, Throwable e) {
        Thread.UncaughtExceptionHandler h = Thread.getDefaultUncaughtExceptionHandler();
        if (h != null) {
            h.uncaughtException(t, e);
        }
    }

    private void closeAll() {
        try {
            subscriptions.forEach(Subscription::close);
            if (poller != null) {
                poller.close();
            }
        } catch (RuntimeException e) {
            LOG.debug("closing the sockets of {}: {}", getName(), e.toString());
        }
        subscriptions.clear();
    }

    private void runCommands() {
        Command c;
        while ((c = commands.poll()) != null) {
            if (c instanceof Add a) {
                open(a);
            } else if (c instanceof Remove r) {
                close(r);
            } else if (c instanceof Task t) {
                t.action().run();
            }
        }
    }

    private void open(Add a) {
        Listener listener = a.listener();
        try {
            subscriptions.add(new Subscription(listener));
            pollerStale = true;
            if (ZmqEndpoint.bindsLocally(listener.endpoint())) {
                listener.markActive();
            }
            LOG.info("listener started {}", listener);
        } catch (RuntimeException e) {
            load.decrementAndGet();
            listener.markFailed("cannot open ZMQ socket: " + e.getMessage());
            LOG.warn("listener failed {}: {}", listener, e.toString());
        }
        a.done().complete();
    }

    private void close(Remove r) {
        for (int i = 0; i < subscriptions.size(); i++) {
            Subscription s = subscriptions.get(i);
            if (s.listener == r.listener()) {
                if (s.lostAt != 0) {
                    awaitingRetry--;
                }
                s.close();
                subscriptions.remove(i);
                load.decrementAndGet();
                pollerStale = true;
                break;
            }
        }
        r.done().complete();
    }

    private void rebuildPoller() {
        if (poller != null) {
            poller.close();
        }
        poller = ctx.createPoller(2 * subscriptions.size());
        heldSockets.clear();
        for (Subscription s : subscriptions) {
            if (s.held) {
                heldSockets.add(s.socket);
            }
            poller.register(s.socket, s.held ? 0 : ZMQ.Poller.POLLIN);
            poller.register(s.monitor, ZMQ.Poller.POLLIN);
        }
        pollerStale = false;
    }

    private void connectionEvents(Subscription s) {
        ZMQ.Event event;
        while ((event = ZMQ.Event.recv(s.monitor, ZMQ.DONTWAIT)) != null) {
            int kind = event.getEvent();
            if (kind == ZMQ.EVENT_CONNECTED) {
                s.listener.markActive();
                retried(s);
            } else if (kind == ZMQ.EVENT_CONNECT_RETRIED || kind == ZMQ.EVENT_CONNECT_DELAYED) {
                retried(s);
            } else if (kind == ZMQ.EVENT_DISCONNECTED && s.lostAt == 0
                    && !ZmqEndpoint.bindsLocally(s.listener.endpoint())) {
                // A bound SUB's peers reconnect by themselves; only a connecting SUB can be left without a connection.
                s.lostAt = System.nanoTime();
                awaitingRetry++;
            }
        }
    }

    private void retried(Subscription s) {
        if (s.lostAt != 0) {
            s.lostAt = 0;
            awaitingRetry--;
        }
    }

    /** Opens a fresh socket for each subscription whose connection JeroMQ dropped for good. */
    private void reopenDroppedConnections() {
        long now = System.nanoTime();
        for (int i = 0; i < subscriptions.size(); i++) {
            Subscription s = subscriptions.get(i);
            if (s.lostAt == 0 || now - s.lostAt < PROTOCOL_DROP_NANOS) {
                continue;
            }
            awaitingRetry--;
            counters.undecodable(EventCounters.UNDECODABLE_FRAME, 1);
            problem(s, "connection dropped after a protocol error (a message over --max-event-bytes "
                    + maxEventBytes + " or malformed ZMTP); reconnecting");
            s.close();
            try {
                subscriptions.set(i, new Subscription(s.listener));
            } catch (RuntimeException e) {
                subscriptions.remove(i--);
                load.decrementAndGet();
                s.listener.markFailed("cannot open ZMQ socket again: " + e.getMessage());
            }
            pollerStale = true;
        }
    }

    private void drain(Subscription sub) {
        for (int n = 0; n < MAX_MESSAGES_PER_ROUND; n++) {
            if (!inFlight.hasRoom()) {
                // Leave the rest in the socket; ZMQ's high-water mark pushes back on the engine.
                pause();
                return;
            }
            List<byte[]> frames = ZmqSockets.receiveMessage(sub.socket, ZMQ.DONTWAIT);
            if (frames == null) {
                return;
            }
            handle(sub, frames);
        }
    }

    private void handle(Subscription sub, List<byte[]> frames) {
        Listener l = sub.listener;
        if (frames.size() != 3) {
            counters.undecodable(EventCounters.UNDECODABLE_FRAME, 1);
            problem(sub, "skipped a message of " + frames.size() + " frames (expected 3)");
            return;
        }
        if (l.conductor() != null) {
            toConductor(sub, l.conductor(), frames);
            return;
        }
        EventBatch batch;
        try {
            batch = sub.decoder.decode(LiveFrames.seq(frames.get(1)), frames.get(2));
        } catch (MalformedBatchException e) {
            counters.undecodable(EventCounters.UNDECODABLE_BATCH, 1);
            problem(sub, "skipped a malformed batch: " + e.getMessage());
            return;
        }
        l.partition().applyLive(l.workerId(), l.dpRank(), l.generation(), batch);
    }

    private void toConductor(Subscription sub, ConductorFeed feed, List<byte[]> frames) {
        ConductorBatchDecoder.Batch batch;
        try {
            LiveFrames.seq(frames.get(1));
            batch = feed.decoder().decode(frames.get(2));
        } catch (MalformedBatchException e) {
            counters.undecodable(EventCounters.UNDECODABLE_BATCH, 1);
            problem(sub, "skipped a malformed batch: " + e.getMessage());
            return;
        }
        if (batch.rejected() > 0) {
            counters.undecodable(EventCounters.UNDECODABLE_EVENT, batch.rejected());
            problem(sub, "skipped " + batch.rejected() + " events: " + batch.firstRejection());
        }
        inFlight.sent();
        feed.conductor().apply(feed.serviceKey(), batch.events(), inFlight::taken);
    }

    private void problem(Subscription sub, String what) {
        sub.listener.recordError(what);
        if (sub.loggedProblems++ < LOGGED_PROBLEMS_PER_STREAM) {
            LOG.warn("{}: {}", sub.listener, what);
        } else {
            LOG.debug("{}: {}", sub.listener, what);
        }
    }

    private static void pause() {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
