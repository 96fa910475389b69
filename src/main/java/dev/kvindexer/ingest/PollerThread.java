package dev.kvindexer.ingest;

import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.InFlightBatches;
import dev.kvindexer.zmq.zmtp.ZmtpConfig;
import dev.kvindexer.zmq.zmtp.ZmtpEndpoint;
import dev.kvindexer.zmq.zmtp.ZmtpFailure;
import dev.kvindexer.zmq.zmtp.ZmtpSubscriber;
import io.vertx.core.Promise;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ingest thread: keeps many listeners' publisher connections on one {@link ZmtpSubscriber}, decodes each live
 * message and hands it to the listener's {@link BatchSink}. Connections are opened, read and closed only here;
 * other threads talk to it through a command queue. Messages wait in a listener's inbox while
 * the node recovers, while the listener is held, or while the partitions are behind; a full inbox stops reading
 * from its connection, so TCP pushes back on the engine.
 */
final class PollerThread extends Thread implements ZmtpSubscriber.Events {
    private static final Logger LOG = LoggerFactory.getLogger(PollerThread.class);
    private static final int POLL_MILLIS = 20;
    /** Messages delivered from one listener per round, so one flooding engine cannot starve the others. */
    static final int MAX_MESSAGES_PER_ROUND = 256;

    static final int LOGGED_PROBLEMS_PER_STREAM = 3;
    /**
     * Messages a held listener, or any listener while the node recovers, buffers before reading stops: what a ZMQ
     * SUB's receive high-water mark would hold (docs/protocol/zmq.md#socket-options), so the engine's own queue takes
     * the rest.
     */
    static final int RECEIVE_HWM = 100_000;
    /** Bytes a delivering listener buffers before reading stops: a few rounds of batches. */
    static final long INBOX_BYTES = 4L << 20;
    /** What any listener buffers before reading stops once the network budget is over half held. */
    static final long TIGHT_INBOX_BYTES = 256L << 10;
    /** How often listeners held back for their inbox's size are looked at again. */
    private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** A publisher that broke the protocol or sent a message over the limit is connected to again after this. */
    static final long PROTOCOL_DROP_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** What other threads ask of this one. */
    sealed interface Command permits Add, Remove, Task {}

    record Add(Listener listener, Promise<Void> done) implements Command {}

    record Remove(Listener listener, Promise<Void> done) implements Command {}

    /** Runs on this thread between poll rounds (tests inject failures with it). */
    record Task(Runnable action) implements Command {}

    private final ZmtpSubscriber subscriber;
    private final long maxEventBytes;
    final EventCounters counters;
    final InFlightBatches inFlight;
    final NetworkBudget budget;
    final Spans spans;
    private final BooleanSupplier gateOpen;
    private final ConcurrentLinkedQueue<Command> commands = new ConcurrentLinkedQueue<>();
    private final Map<Listener, Subscription> subscriptions = new HashMap<>();
    /** Subscriptions with messages to deliver, in turn. */
    private final ArrayDeque<Subscription> ready = new ArrayDeque<>();
    /** Connected while the node recovered: active once the gate opens (docs/protocol/zmq.md#listener-lifecycle). */
    private final List<Subscription> awaitingGate = new ArrayList<>();
    /** Subscriptions whose reading is held back because their inbox is full. */
    private final List<Subscription> throttled = new ArrayList<>();

    private final AtomicInteger load = new AtomicInteger();
    private volatile boolean running = true;
    /** Why this thread stopped working, or null while it runs. */
    private volatile String failure;

    private boolean gateWasOpen;
    private long nextRecheck;

    PollerThread(
            String name,
            long maxEventBytes,
            EventCounters counters,
            InFlightBatches inFlight,
            NetworkBudget budget,
            Duration messageTimeout,
            BooleanSupplier gateOpen,
            Spans spans) {
        super(name);
        this.spans = spans;
        setDaemon(true);
        this.maxEventBytes = maxEventBytes;
        this.counters = counters;
        this.inFlight = inFlight;
        this.budget = budget;
        this.gateOpen = gateOpen;
        try {
            this.subscriber = new ZmtpSubscriber(
                    ZmtpConfig.defaults(maxEventBytes)
                            .withProtocolErrorDelay(Duration.ofNanos(PROTOCOL_DROP_NANOS))
                            .withMessageTimeout(messageTimeout),
                    budget,
                    this);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a selector for " + name, e);
        }
    }

    int load() {
        return load.get();
    }

    void add(Listener listener, Promise<Void> done) {
        load.incrementAndGet();
        command(new Add(listener, done));
    }

    void remove(Listener listener, Promise<Void> done) {
        command(new Remove(listener, done));
    }

    /** Starts delivering a held listener's messages: what was buffered meanwhile comes first. */
    void release(Listener listener) {
        command(new Task(() -> {
            Subscription s = subscriptions.get(listener);
            if (s != null && s.held) {
                s.held = false;
                if (!s.inbox.isEmpty()) {
                    enqueue(s);
                }
            }
        }));
    }

    /** Runs {@code action} on this thread. */
    void execute(Runnable action) {
        command(new Task(action));
    }

    private void command(Command c) {
        commands.add(c);
        subscriber.wakeup();
    }

    /** Test access: the subscriber this thread polls. */
    ZmtpSubscriber subscriber() {
        return subscriber;
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

    /** Stops the loop; the thread closes its connections on its way out. */
    void shutdown() {
        running = false;
        subscriber.wakeup();
    }

    @Override
    public void run() {
        try {
            while (running) {
                runCommands();
                if (!gateWasOpen && gateOpen.getAsBoolean()) {
                    gateWasOpen = true;
                    activateConnected();
                }
                boolean deliverable = gateWasOpen && !ready.isEmpty() && inFlight.hasRoom();
                subscriber.poll(deliverable ? 0 : POLL_MILLIS);
                if (gateWasOpen) {
                    deliver();
                }
                long now = System.nanoTime();
                if (!throttled.isEmpty() && now - nextRecheck >= 0) {
                    nextRecheck = now + RECHECK_NANOS;
                    recheckThrottled();
                }
            }
        } catch (Throwable e) {
            failure = "ingest thread " + getName() + " failed: " + e;
            LOG.error("ingest thread {} stopped by an unexpected error; its listeners are resubscribed", getName(), e);
            for (Subscription s : subscriptions.values()) {
                s.listener.markFailed(failure);
            }
            if (e instanceof VirtualMachineError) {
                forwardToDefaultHandler(this, e);
            }
        } finally {
            closeAll();
        }
    }

    /** Listeners held back for their inbox read again once it has room (the budget freed, the inbox drained). */
    private void recheckThrottled() {
        for (int i = throttled.size() - 1; i >= 0; i--) {
            Subscription s = throttled.get(i);
            if (s.closed || !s.throttled || !s.full(gateWasOpen)) {
                throttled.set(i, throttled.get(throttled.size() - 1));
                throttled.remove(throttled.size() - 1);
                if (!s.closed && s.throttled) {
                    unthrottle(s);
                }
            }
        }
    }

    private void throttle(Subscription s) {
        if (!s.throttled) {
            s.throttled = true;
            throttled.add(s);
            subscriber.reading(s.endpoint, false);
        }
    }

    private void unthrottle(Subscription s) {
        s.throttled = false;
        subscriber.reading(s.endpoint, true);
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
            subscriber.close();
        } catch (RuntimeException e) {
            LOG.debug("closing the connections of {}: {}", getName(), e.toString());
        }
        subscriptions.values().forEach(Subscription::clear);
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
        Subscription s = Subscription.of(listener, this);
        try {
            s.endpoint = subscriber.open(listener.endpoint(), s);
            subscriptions.put(listener, s);
            if (s.endpoint.binds()) {
                listener.markActive();
            }
            LOG.info("listener started {}", listener);
        } catch (IOException | RuntimeException e) {
            load.decrementAndGet();
            listener.markFailed("cannot open ZMQ socket: " + e.getMessage());
            LOG.warn("listener failed {}: {}", listener, e.toString());
        }
        a.done().complete();
    }

    private void close(Remove r) {
        Subscription s = subscriptions.remove(r.listener());
        if (s != null) {
            subscriber.close(s.endpoint);
            s.closed = true;
            s.clear();
            load.decrementAndGet();
        }
        r.done().complete();
    }

    /** The gate opened: listeners that connected behind it are active now. */
    private void activateConnected() {
        for (Subscription s : awaitingGate) {
            if (!s.closed && s.endpoint.connected()) {
                s.listener.markActive();
            }
        }
        awaitingGate.clear();
    }

    @Override
    public void connected(ZmtpEndpoint endpoint) {
        Subscription s = (Subscription) endpoint.attachment();
        if (endpoint.binds()) {
            return;
        }
        if (gateWasOpen) {
            s.listener.markActive();
        } else {
            awaitingGate.add(s);
        }
    }

    @Override
    public void disconnected(ZmtpEndpoint endpoint, ZmtpFailure why, boolean established) {
        Subscription s = (Subscription) endpoint.attachment();
        counters.disconnect(why.reason());
        if (why instanceof ZmtpFailure.OverBudget) {
            budget.refused(NetworkBudget.ZMQ);
            String what = "connection dropped: " + why.describe() + "; reconnecting";
            s.problem(what);
            s.listener.markFailed(what);
        } else if (why.peerMisbehaved()) {
            counters.undecodable(EventCounters.UNDECODABLE_FRAME, 1);
            String what = "connection dropped: " + describe(why) + "; reconnecting";
            s.problem(what);
            if (!endpoint.binds()) {
                s.listener.markFailed(what);
            }
        } else if (endpoint.binds()) {
            LOG.debug("{}: {}", s.listener, why.describe());
        } else if (established) {
            s.listener.markFailed(why.describe() + "; reconnecting");
            LOG.info("{}: {}; reconnecting", s.listener, why.describe());
        } else if (why instanceof ZmtpFailure.Unresolvable) {
            // A name that does not resolve fails the listener, as it fails the reference's connect; it is tried again
            // all the same, so an engine whose name appears later (a pod being scheduled) is still picked up.
            if (s.listener.state() != ListenerState.FAILED) {
                LOG.warn("{}: {}; retrying", s.listener, why.describe());
            }
            s.listener.markFailed(why.describe() + "; retrying");
        } else {
            s.listener.recordError(why.describe() + "; retrying");
            LOG.debug("{}: {}", s.listener, why.describe());
        }
    }

    private String describe(ZmtpFailure why) {
        if (why instanceof ZmtpFailure.TooLarge t) {
            return "a message over --max-event-bytes " + maxEventBytes + " (a frame declares "
                    + Long.toUnsignedString(t.declaredBytes()) + " bytes)";
        }
        return why.describe();
    }

    @Override
    public void message(ZmtpEndpoint endpoint, List<byte[]> frames, long held) {
        Subscription s = (Subscription) endpoint.attachment();
        s.inbox.add(new Subscription.Inbound(frames, held));
        s.inboxBytes += held;
        if (!s.held && !s.queued) {
            enqueue(s);
        }
        if (s.full(gateWasOpen)) {
            throttle(s);
        }
    }

    private void enqueue(Subscription s) {
        s.queued = true;
        ready.add(s);
    }

    /** One round over the listeners with messages, each delivering its share while the partitions have room. */
    private void deliver() {
        for (int turns = ready.size(); turns > 0 && inFlight.hasRoom(); turns--) {
            Subscription s = ready.poll();
            s.queued = false;
            if (s.closed || s.held) {
                continue;
            }
            Subscription.Inbound m;
            for (int n = 0; n < MAX_MESSAGES_PER_ROUND && inFlight.hasRoom() && (m = s.take()) != null; n++) {
                handle(s, m);
            }
            if (!s.inbox.isEmpty()) {
                enqueue(s);
            }
            if (s.throttled && !s.full(gateWasOpen)) {
                unthrottle(s);
            }
        }
    }

    private void handle(Subscription sub, Subscription.Inbound m) {
        if (m.frames().size() != 3) {
            budget.release(m.held());
            counters.undecodable(EventCounters.UNDECODABLE_FRAME, 1);
            sub.problem("skipped a message of " + m.frames().size() + " frames (expected 3)");
            return;
        }
        sub.deliver(m.frames(), m.held());
    }
}
