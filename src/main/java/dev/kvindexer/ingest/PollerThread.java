package dev.kvindexer.ingest;

import dev.kvindexer.cluster.ReadyGate;
import dev.kvindexer.event.EventBatch;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.partition.PartitionBus;
import dev.kvindexer.partition.PartitionMessages;
import dev.kvindexer.wire.EngineBatchDecoder;
import dev.kvindexer.wire.LiveFrames;
import dev.kvindexer.wire.MalformedBatchException;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.EventBus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One ingest thread: owns many SUB sockets, polls them together, decodes each live message into an
 * {@link EventBatch} and sends it to the listener's partition. Sockets are created, used and closed only
 * here, because ZMQ sockets are not thread-safe; other threads talk to it through a command queue.
 */
final class PollerThread extends Thread {
    private static final Logger LOG = LoggerFactory.getLogger(PollerThread.class);
    private static final int POLL_MILLIS = 20;
    /** Messages taken from one socket per round, so one flooding engine cannot starve the others. */
    private static final int MAX_MESSAGES_PER_ROUND = 256;
    private static final int LOGGED_PROBLEMS_PER_STREAM = 3;
    private static final AtomicLong MONITORS = new AtomicLong();

    private final ZContext ctx;
    private final EventBus bus;
    private final EventCounters counters;
    private final InFlightBatches inFlight;
    private final ReadyGate gate;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final List<Subscription> subscriptions = new ArrayList<>();
    private final AtomicInteger load = new AtomicInteger();
    private volatile boolean running = true;
    private ZMQ.Poller poller;
    private boolean pollerStale = true;

    /**
     * A listener's SUB, the PAIR that receives the SUB's connection events (so the listener stays pending
     * until its engine is really there), and the per-stream decoder. All owned by this thread.
     */
    private final class Subscription {
        final Listener listener;
        final ZMQ.Socket socket;
        final ZMQ.Socket monitor;
        final EngineBatchDecoder decoder;
        int loggedProblems;

        Subscription(Listener listener) {
            this.listener = listener;
            this.decoder = new EngineBatchDecoder(listener.blockSize(), listener.publisher().defaultLora());
            this.socket = ZmqSockets.subscriber(ctx, listener.endpoint());
            ZMQ.Socket pair = null;
            try {
                String monitorAddress = "inproc://kvindexer-monitor-" + MONITORS.incrementAndGet();
                socket.monitor(monitorAddress, ZMQ.EVENT_CONNECTED);
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

    PollerThread(String name, ZContext ctx, EventBus bus, EventCounters counters, InFlightBatches inFlight,
                 ReadyGate gate) {
        super(name);
        setDaemon(true);
        this.ctx = ctx;
        this.bus = bus;
        this.counters = counters;
        this.inFlight = inFlight;
        this.gate = gate;
    }

    int load() {
        return load.get();
    }

    void add(Listener listener, Promise<Void> done) {
        load.incrementAndGet();
        commands.add(() -> {
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
            done.complete();
        });
    }

    void remove(Listener listener, Promise<Void> done) {
        commands.add(() -> {
            for (int i = 0; i < subscriptions.size(); i++) {
                Subscription s = subscriptions.get(i);
                if (s.listener == listener) {
                    s.close();
                    subscriptions.remove(i);
                    load.decrementAndGet();
                    pollerStale = true;
                    break;
                }
            }
            done.complete();
        });
    }

    void shutdown() {
        running = false;
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
                if (!gate.isOpen()) {
                    // Startup recovery: let ZMQ buffer. Touching each socket still lets JeroMQ send its
                    // subscription and finish connecting, which it only does on the owning thread.
                    subscriptions.forEach(s -> s.socket.getEvents());
                    pause();
                    continue;
                }
                if (pollerStale) {
                    rebuildPoller();
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
            }
        } catch (RuntimeException e) {
            LOG.error("ingest thread {} stopped by an unexpected error", getName(), e);
        } finally {
            runCommands();
            subscriptions.forEach(Subscription::close);
            subscriptions.clear();
            if (poller != null) {
                poller.close();
            }
        }
    }

    private void runCommands() {
        Runnable r;
        while ((r = commands.poll()) != null) {
            r.run();
        }
    }

    private void rebuildPoller() {
        if (poller != null) {
            poller.close();
        }
        poller = ctx.createPoller(2 * subscriptions.size());
        for (Subscription s : subscriptions) {
            poller.register(s.socket, ZMQ.Poller.POLLIN);
            poller.register(s.monitor, ZMQ.Poller.POLLIN);
        }
        pollerStale = false;
    }

    private void connectionEvents(Subscription s) {
        ZMQ.Event event;
        while ((event = ZMQ.Event.recv(s.monitor, ZMQ.DONTWAIT)) != null) {
            if (event.getEvent() == ZMQ.EVENT_CONNECTED) {
                s.listener.markActive();
            }
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
            counters.warning(WarningKind.MALFORMED_FRAME, 1);
            problem(sub, "skipped a message of " + frames.size() + " frames (expected 3)");
            return;
        }
        EventBatch batch;
        try {
            batch = sub.decoder.decode(LiveFrames.seq(frames.get(1)), frames.get(2));
        } catch (MalformedBatchException e) {
            counters.warning(WarningKind.DECODE_ERROR, 1);
            problem(sub, "skipped a malformed batch: " + e.getMessage());
            return;
        }
        inFlight.sent();
        PartitionBus.send(bus, l.partitionAddress(), new PartitionMessages.ApplyBatch(l.workerId(), l.dpRank(), l.generation(), batch));
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
