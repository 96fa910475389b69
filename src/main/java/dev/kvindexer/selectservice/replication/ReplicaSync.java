package dev.kvindexer.selectservice.replication;

import dev.kvindexer.load.LoadEvent;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.select.Bookings;
import dev.kvindexer.select.Mirror;
import dev.kvindexer.select.SessionBindings;
import dev.kvindexer.zmq.ZmqPeerOptions;
import dev.kvindexer.zmq.zmtp.ZmtpConfig;
import dev.kvindexer.zmq.zmtp.ZmtpEndpoint;
import dev.kvindexer.zmq.zmtp.ZmtpFailure;
import dev.kvindexer.zmq.zmtp.ZmtpSubscriber;
import io.vertx.core.Context;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Dynamo's best-effort replica sync of active load (docs/api/selection.md#replica-sync): bookings, completed prefills and releases go out
 * on a ZMQ PUB socket, and one subscriber connected to every peer's PUB brings theirs in. With session affinity on,
 * session bindings ride the same mesh on their own topic. Publishing happens on the caller's thread (the service's
 * event loop); a thread of its own receives, drops what this process sent, and hands every decoded event on. The
 * subscriber is the engines' own ({@link ZmtpSubscriber}), so what a peer sends is held within its bounds and the
 * budget; a malformed message is counted and dropped, and the thread keeps running.
 */
public final class ReplicaSync implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSync.class);
    private static final byte[] TOPIC = ReplicaEventCodec.TOPIC.getBytes(StandardCharsets.UTF_8);
    private static final byte[] AFFINITY_TOPIC = AffinityEventCodec.TOPIC.getBytes(StandardCharsets.UTF_8);
    /** Messages queued for one peer that does not read: bookings are small, and best effort drops the rest. */
    private static final int QUEUE = 1_000;
    /** Decoded messages handed on and not yet applied; more are dropped, so a flooding peer cannot fill the heap. */
    static final int MAX_WAITING = 1024;
    /** Bytes a message may take beyond its hashes (at most 9 bytes each in msgpack). */
    private static final long MESSAGE_OVERHEAD = 64 * 1024;

    private final long routerId;
    private final long maxMessageBytes;
    private final BiConsumer<ReplicaEventCodec.Received, Runnable> deliver;
    /** Applies a peer's session binding and then runs the callback; null when session affinity is off. */
    private final BiConsumer<SessionBindings.Binding, Runnable> deliverBinding;

    private final AtomicInteger waiting = new AtomicInteger();
    private final ZContext zmq = new ZContext(1);
    private final ZMQ.Socket pub;
    private final NetworkBudget budget;
    /** Created and used by the receiving thread alone; peers change through {@link #subCommands}. */
    private ZmtpSubscriber sub;

    private final Map<String, ZmtpEndpoint> connected = new HashMap<>();

    private final TreeSet<String> peers = new TreeSet<>();
    private final ConcurrentLinkedQueue<Runnable> subCommands = new ConcurrentLinkedQueue<>();
    private final Thread receiver;
    private volatile boolean running = true;
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong overflow = new AtomicLong();
    private final AtomicLong refusedBindings;

    /**
     * Starts replica sync for a service: this replica's bookings, completed prefills and releases are published, and
     * peers' are applied on {@code home}, the context that owns the selection state. With {@code sessions} (null when
     * session affinity is off) peers' session bindings are applied too; this replica's go out through
     * {@link #publish(SessionBindings.Binding)}, which the caller installs.
     */
    public static ReplicaSync start(
            int port,
            List<String> initialPeers,
            long routerId,
            int maxBookingBlocks,
            NetworkBudget budget,
            Context home,
            Bookings bookings,
            Mirror mirror,
            SessionBindings sessions) {
        AtomicLong refused = new AtomicLong();
        ReplicaSync sync = new ReplicaSync(
                port,
                initialPeers,
                routerId,
                maxBookingBlocks,
                budget,
                onContext(home, mirror::apply),
                sessions == null
                        ? null
                        : (b, applied) -> home.runOnContext(v -> {
                            applied.run();
                            if (refused(sessions.apply(b))) {
                                refused.incrementAndGet();
                            }
                        }),
                refused);
        bookings.onEvent(sync::publish);
        return sync;
    }

    /**
     * Starts replica sync of active load alone (the slot tracker's): {@code apply} takes each peer's event on
     * {@code home}, the context that owns the load; this replica's events go out through {@link #publish(LoadEvent)}.
     */
    public static ReplicaSync start(
            int port,
            List<String> initialPeers,
            long routerId,
            int maxBlocks,
            NetworkBudget budget,
            Context home,
            java.util.function.Consumer<LoadEvent> apply) {
        return new ReplicaSync(
                port, initialPeers, routerId, maxBlocks, budget, onContext(home, apply), null, new AtomicLong());
    }

    /** Hands a peer's load change to {@code apply} on {@code home}, counting it as taken first. */
    private static BiConsumer<ReplicaEventCodec.Received, Runnable> onContext(
            Context home, java.util.function.Consumer<LoadEvent> apply) {
        return (r, applied) -> home.runOnContext(v -> {
            applied.run();
            apply.accept(r.event());
        });
    }

    /** A binding this replica could not keep: an id over the limit, or a full table. */
    static boolean refused(SessionBindings.Applied a) {
        return a == SessionBindings.Applied.REJECTED_SESSION_ID || a == SessionBindings.Applied.REJECTED_CAPACITY;
    }

    /**
     * Binds the PUB on {@code tcp://*:port} and starts receiving from {@code initialPeers}.
     *
     * @param maxBookingBlocks the largest booking a message may carry: larger messages are dropped unread
     * @param deliver          takes each decoded event and a callback to run once it has been applied
     */
    private ReplicaSync(
            int port,
            List<String> initialPeers,
            long routerId,
            int maxBookingBlocks,
            NetworkBudget budget,
            BiConsumer<ReplicaEventCodec.Received, Runnable> deliver,
            BiConsumer<SessionBindings.Binding, Runnable> deliverBinding,
            AtomicLong refusedBindings) {
        this.routerId = routerId;
        this.budget = budget;
        this.deliver = deliver;
        this.deliverBinding = deliverBinding;
        this.refusedBindings = refusedBindings;
        this.maxMessageBytes = 9L * maxBookingBlocks + MESSAGE_OVERHEAD;
        pub = zmq.createSocket(SocketType.PUB);
        // Peers connect here: one that never finishes its handshake is dropped like an engine would be.
        ZmqPeerOptions.apply(pub, maxMessageBytes);
        pub.setSndHWM(QUEUE);
        pub.bind("tcp://*:" + port);
        for (String peer : initialPeers) {
            peers.add(peer);
            subCommands.add(() -> connect(peer));
        }
        receiver = new Thread(this::receive, "replica-sync-sub");
        receiver.setDaemon(true);
        receiver.start();
    }

    /** Publishes one of this replica's load changes (best effort, as Dynamo's mesh is). */
    public void publish(LoadEvent e) {
        pub.send(TOPIC, ZMQ.SNDMORE | ZMQ.DONTWAIT);
        pub.send(ReplicaEventCodec.encode(e, routerId), ZMQ.DONTWAIT);
    }

    /** Publishes one of this replica's session bindings (best effort, as Dynamo's mesh is). */
    public void publish(SessionBindings.Binding b) {
        pub.send(AFFINITY_TOPIC, ZMQ.SNDMORE | ZMQ.DONTWAIT);
        pub.send(AffinityEventCodec.encode(b), ZMQ.DONTWAIT);
    }

    /** Connects to a peer's PUB; false when it is already connected. */
    public synchronized boolean addPeer(String endpoint) {
        if (!peers.add(endpoint)) {
            return false;
        }
        subCommands.add(() -> connect(endpoint));
        return true;
    }

    /** On the receiving thread. */
    private void connect(String endpoint) {
        try {
            connected.put(endpoint, sub.open(endpoint, endpoint));
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("replica sync: cannot subscribe to {}: {}", endpoint, e.getMessage());
        }
    }

    public synchronized boolean removePeer(String endpoint) {
        if (!peers.remove(endpoint)) {
            return false;
        }
        subCommands.add(() -> {
            ZmtpEndpoint e = connected.remove(endpoint);
            if (e != null) {
                sub.close(e);
            }
        });
        return true;
    }

    public synchronized List<String> peers() {
        return new ArrayList<>(peers);
    }

    private void receive() {
        try {
            sub = new ZmtpSubscriber(ZmtpConfig.defaults(maxMessageBytes), budget, new ZmtpSubscriber.Events() {
                @Override
                public void connected(ZmtpEndpoint endpoint) {
                    LOG.debug("replica sync: subscribed to {}", endpoint.endpoint());
                }

                @Override
                public void disconnected(ZmtpEndpoint endpoint, ZmtpFailure why, boolean established) {
                    if (why.peerMisbehaved()) {
                        malformed.incrementAndGet();
                    }
                    LOG.debug("replica sync: {}: {}", endpoint.endpoint(), why.describe());
                }

                @Override
                public void message(ZmtpEndpoint endpoint, List<byte[]> frames, long held) {
                    try {
                        take(frames);
                    } finally {
                        budget.release(held);
                    }
                }
            });
        } catch (IOException e) {
            LOG.error("replica sync: cannot open a selector; peers' events will not be received", e);
            return;
        }
        try {
            while (running) {
                for (Runnable c; (c = subCommands.poll()) != null; ) {
                    try {
                        c.run();
                    } catch (RuntimeException e) {
                        LOG.warn("replica sync: {}", e.toString());
                    }
                }
                sub.poll(100);
            }
        } catch (IOException | RuntimeException e) {
            if (running) {
                LOG.error("replica sync receive stopped", e);
            }
        } finally {
            sub.close();
        }
    }

    /**
     * One message from a peer, on the receiving thread: ours (a topic this replica subscribes to and two frames) is
     * decoded and handed on, any other topic (the subscription takes everything) is none of ours.
     */
    private void take(List<byte[]> frames) {
        byte[] topic = frames.get(0);
        boolean load = Arrays.equals(topic, TOPIC);
        boolean binding = Arrays.equals(topic, AFFINITY_TOPIC);
        if (!load && !binding) {
            return;
        }
        received.incrementAndGet();
        if (load && frames.size() == 2) {
            handOn(frames.get(1), ReplicaEventCodec::decode, ReplicaEventCodec.Received::routerId, deliver);
        } else if (binding && frames.size() == 2) {
            if (deliverBinding != null) {
                handOn(
                        frames.get(1),
                        AffinityEventCodec::decode,
                        b -> b.version().writerId(),
                        deliverBinding);
            }
        } else {
            malformed.incrementAndGet();
        }
    }

    /**
     * On the receiving thread: a peer's message decoded and handed on, unless this process wrote it or too many wait
     * to be applied; what is dropped is counted.
     *
     * @param writer the process that wrote a decoded message
     */
    private <T> void handOn(
            byte[] payload, Function<byte[], T> decode, ToLongFunction<T> writer, BiConsumer<T, Runnable> to) {
        T decoded;
        try {
            decoded = decode.apply(payload);
        } catch (IllegalArgumentException e) {
            malformed.incrementAndGet();
            LOG.debug("replica sync: {}", e.getMessage());
            return;
        }
        if (writer.applyAsLong(decoded) == routerId) {
            return;
        }
        if (waiting.incrementAndGet() > MAX_WAITING) {
            waiting.decrementAndGet();
            overflow.incrementAndGet();
            return;
        }
        to.accept(decoded, waiting::decrementAndGet);
    }

    /**
     * Messages taken from peers, how many of them were malformed, how many were dropped while too many waited to be
     * applied, and how many session bindings could not be kept (an id over the limit, a full table).
     */
    public long[] counts() {
        return new long[] {received.get(), malformed.get(), overflow.get(), refusedBindings.get()};
    }

    @Override
    public void close() {
        running = false;
        try {
            receiver.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        zmq.close();
    }
}
