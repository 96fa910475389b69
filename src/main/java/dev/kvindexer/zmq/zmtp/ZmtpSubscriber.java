package dev.kvindexer.zmq.zmtp;

import dev.kvindexer.net.NetworkBudget;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * A ZMTP 3 SUB for many endpoints on one {@link Selector}, driven by its owner's thread through {@link #poll}: it
 * connects (or binds and accepts), handshakes, subscribes to everything, hands each whole message to its
 * {@link Events}, heartbeats, and makes every lost connection again. A connection costs one file descriptor and no
 * thread. Only {@link #wakeup} may be called from another thread.
 */
public final class ZmtpSubscriber implements AutoCloseable {
    private static final int READ_BUFFER_BYTES = 128 * 1024;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final int ACCEPTS_PER_TURN = 16;
    private static final int ACCEPT_BACKLOG = 100;

    /** What the owner hears, always on the polling thread. */
    public interface Events {
        /** A publisher completed the handshake and has the subscription: messages flow from now on. */
        void connected(ZmtpEndpoint endpoint);

        /**
         * A connection ended or could not be made ({@code established}: it had completed the handshake). A connecting
         * endpoint tries again by itself; a bound one waits for its publisher to reconnect.
         */
        void disconnected(ZmtpEndpoint endpoint, ZmtpFailure why, boolean established);

        /**
         * One whole message, its frames in order; the list and the arrays belong to the owner, and so do {@code held}
         * bytes of the network budget, which the owner releases once it has let the message go.
         */
        void message(ZmtpEndpoint endpoint, List<byte[]> frames, long held);
    }

    private final ZmtpConfig settings;
    private final NetworkBudget budget;
    private final Events events;
    private final Selector selector;
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(READ_BUFFER_BYTES);
    private final List<ZmtpEndpoint> endpoints = new ArrayList<>();
    private final ArrayDeque<ZmtpConnector> toConnect = new ArrayDeque<>();
    /** Lookups finished on another thread, to be carried on here. */
    private final ConcurrentLinkedQueue<Runnable> lookedUp = new ConcurrentLinkedQueue<>();

    private int opening;
    private long nextTick = System.nanoTime();

    /** Every byte a connection holds, and every reply it owes, is reserved from {@code budget} first. */
    public ZmtpSubscriber(ZmtpConfig settings, NetworkBudget budget, Events events) throws IOException {
        this.settings = settings;
        this.budget = budget;
        this.events = events;
        this.selector = Selector.open();
    }

    public ZmtpSubscriber(ZmtpConfig settings, Events events) throws IOException {
        this(settings, NetworkBudget.unbounded(), events);
    }

    /**
     * Starts subscribing at {@code endpoint} ({@code tcp://host:port}, {@code tcp://*:port}, {@code ipc://path});
     * a bound endpoint is listening when this returns. Throws when the endpoint cannot be parsed or bound.
     */
    public ZmtpEndpoint open(String endpoint, Object attachment) throws IOException {
        ZmtpAddress address = ZmtpAddress.parse(endpoint);
        ZmtpEndpoint e;
        if (address instanceof ZmtpAddress.TcpBind b) {
            e = bind(endpoint, attachment, b.port());
        } else {
            ZmtpConnector c = new ZmtpConnector(
                    endpoint, attachment, address, settings.reconnectMin().toNanos());
            queue(c);
            e = c;
        }
        e.slot = endpoints.size();
        endpoints.add(e);
        return e;
    }

    private ZmtpAcceptor bind(String endpoint, Object attachment, int port) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(port), ACCEPT_BACKLOG);
            server.configureBlocking(false);
            ZmtpAcceptor a = new ZmtpAcceptor(endpoint, attachment, server);
            a.key = server.register(selector, SelectionKey.OP_ACCEPT, a);
            return a;
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot bind " + endpoint + ": " + reason(e), e);
        }
    }

    /** Stops subscribing there and closes its connections; nothing more of it reaches {@link Events}. */
    public void close(ZmtpEndpoint e) {
        if (e.closed) {
            return;
        }
        e.closed = true;
        for (ZmtpSession s : e.sessions()) {
            s.close();
        }
        if (e instanceof ZmtpConnector c) {
            c.session = null;
            doneOpening(c);
        } else if (e instanceof ZmtpAcceptor a) {
            a.accepted.clear();
            a.key.cancel();
            try {
                a.server.close();
            } catch (IOException ignored) {
                // nothing else to release
            }
        }
        ZmtpEndpoint last = endpoints.remove(endpoints.size() - 1);
        if (last != e) {
            endpoints.set(e.slot, last);
            last.slot = e.slot;
        }
    }

    /**
     * Lets the endpoint's messages be read, or holds them back: the connection stays up and answers heartbeats, the
     * publisher queues, and its silence does not count against it meanwhile.
     */
    public void reading(ZmtpEndpoint e, boolean on) {
        if (e.reading == on || e.closed) {
            return;
        }
        e.reading = on;
        long now = System.nanoTime();
        for (ZmtpSession s : e.sessions()) {
            if (s.phase != ZmtpSession.Phase.CONNECTING) {
                if (on) {
                    s.resumed(now);
                } else {
                    s.interest();
                }
            }
        }
    }

    /** Endpoints open now. */
    public int size() {
        return endpoints.size();
    }

    /** Breaks a {@link #poll} wait; the one method any thread may call. */
    public void wakeup() {
        selector.wakeup();
    }

    /**
     * One round: starts due connects, runs heartbeats and timeouts, then waits up to {@code timeoutMillis} (0: not at
     * all) for I/O and handles what is ready. Throws only when the selector itself fails.
     */
    public void poll(long timeoutMillis) throws IOException {
        Runnable r;
        while ((r = lookedUp.poll()) != null) {
            r.run();
        }
        long now = System.nanoTime();
        if (now - nextTick >= 0) {
            tick(now);
            nextTick = now + TICK_NANOS;
        }
        startConnects(now);
        if (timeoutMillis <= 0) {
            selector.selectNow(this::ready);
        } else {
            long untilTick = TimeUnit.NANOSECONDS.toMillis(nextTick - now) + 1;
            selector.select(this::ready, Math.min(timeoutMillis, untilTick));
        }
    }

    private void queue(ZmtpConnector c) {
        c.queued = true;
        toConnect.add(c);
    }

    private void startConnects(long now) {
        while (opening < settings.maxConnecting() && !toConnect.isEmpty()) {
            ZmtpConnector c = toConnect.poll();
            c.queued = false;
            if (!c.closed) {
                connect(c, now);
            }
        }
    }

    private void connect(ZmtpConnector c, long now) {
        c.opening = true;
        opening++;
        if (c.address instanceof ZmtpAddress.Tcp tcp && tcp.needsLookup()) {
            ZmtpLookups.resolve(tcp, (address, error) -> {
                lookedUp.add(() -> lookedUp(c, address, error));
                selector.wakeup();
            });
            return;
        }
        try {
            connect(c, target(c.address), now);
        } catch (IOException e) {
            failedToConnect(c, new ZmtpFailure.Unreachable(reason(e)), now);
        }
    }

    private void lookedUp(ZmtpConnector c, InetSocketAddress address, Throwable error) {
        if (c.closed) {
            return;
        }
        long now = System.nanoTime();
        if (error != null) {
            failedToConnect(c, new ZmtpFailure.Unresolvable(reason(error)), now);
        } else {
            connect(c, address, now);
        }
    }

    private static SocketAddress target(ZmtpAddress address) throws IOException {
        if (address instanceof ZmtpAddress.Tcp tcp) {
            return tcp.resolve();
        }
        if (address instanceof ZmtpAddress.Ipc ipc) {
            return UnixDomainSocketAddress.of(ipc.path());
        }
        throw new IOException("an inproc endpoint exists only inside the process that binds it");
    }

    private void connect(ZmtpConnector c, SocketAddress to, long now) {
        SocketChannel channel = null;
        try {
            boolean unix = to instanceof UnixDomainSocketAddress;
            channel = unix ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
            channel.configureBlocking(false);
            if (!unix) {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            }
            ZmtpSession s = new ZmtpSession(this, c, channel, settings.maxMessageBytes(), budget);
            s.key = channel.register(selector, 0, s);
            c.session = s;
            if (channel.connect(to)) {
                s.handshake(now, settings.handshakeTimeout().toNanos());
            } else {
                s.deadline = now + settings.connectTimeout().toNanos();
                s.interest();
            }
        } catch (ZmtpException e) {
            drop(c.session, e.failure(), now);
        } catch (IOException e) {
            if (c.session != null) {
                drop(c.session, new ZmtpFailure.Unreachable(reason(e)), now);
            } else {
                closeQuietly(channel);
                failedToConnect(c, new ZmtpFailure.Unreachable(reason(e)), now);
            }
        }
    }

    private void failedToConnect(ZmtpConnector c, ZmtpFailure why, long now) {
        doneOpening(c);
        c.retryLater(now, why, settings);
        events.disconnected(c, why, false);
    }

    private void doneOpening(ZmtpConnector c) {
        if (c.opening) {
            c.opening = false;
            opening--;
        }
    }

    /** A session finished its handshake (called by the session). */
    void established(ZmtpSession s) {
        if (s.endpoint instanceof ZmtpConnector c) {
            doneOpening(c);
            c.established(settings.reconnectMin().toNanos());
        }
        events.connected(s.endpoint);
    }

    /** A session received a whole message (called by the session); {@code held} budget bytes go with it. */
    void delivered(ZmtpSession s, List<byte[]> frames, long held) {
        events.message(s.endpoint, frames, held);
    }

    /** Ends a session for {@code why}; a connector tries again later. */
    private void drop(ZmtpSession s, ZmtpFailure cause, long now) {
        boolean established = s.phase == ZmtpSession.Phase.ACTIVE;
        // A peer that closes before the handshake is done (one that refuses a SUB, say) was never connected.
        ZmtpFailure why = !established && cause instanceof ZmtpFailure.Lost lost
                ? new ZmtpFailure.Unreachable(lost.detail() + " during the handshake")
                : cause;
        s.close();
        ZmtpEndpoint e = s.endpoint;
        if (e instanceof ZmtpConnector c) {
            c.session = null;
            doneOpening(c);
            c.retryLater(now, why, settings);
        } else if (e instanceof ZmtpAcceptor a) {
            a.accepted.remove(s);
        }
        events.disconnected(e, why, established);
    }

    private void ready(SelectionKey key) {
        Object attachment = key.attachment();
        long now = System.nanoTime();
        if (attachment instanceof ZmtpAcceptor a) {
            accept(a, now);
            return;
        }
        ZmtpSession s = (ZmtpSession) attachment;
        try {
            if (!key.isValid()) {
                return;
            }
            if (key.isConnectable()) {
                if (s.channel.finishConnect()) {
                    s.handshake(now, settings.handshakeTimeout().toNanos());
                }
                return;
            }
            if (key.isWritable()) {
                s.flush(now);
            }
            if (key.isReadable()) {
                s.read(scratch, now);
            }
        } catch (ZmtpException e) {
            drop(s, e.failure(), now);
        } catch (IOException e) {
            drop(
                    s,
                    s.phase == ZmtpSession.Phase.ACTIVE
                            ? new ZmtpFailure.Lost(reason(e))
                            : new ZmtpFailure.Unreachable(reason(e)),
                    now);
        }
    }

    private void accept(ZmtpAcceptor a, long now) {
        for (int i = 0; i < ACCEPTS_PER_TURN; i++) {
            SocketChannel channel;
            try {
                channel = a.server.accept();
            } catch (IOException e) {
                // Out of descriptors, say: the connection waits in the backlog, and accepting again at once would
                // spin on it.
                a.key.interestOps(0);
                a.acceptAgainAt = now + TICK_NANOS;
                return;
            }
            if (channel == null) {
                return;
            }
            if (a.accepted.size() >= ZmtpAcceptor.MAX_SESSIONS) {
                closeQuietly(channel);
                continue;
            }
            ZmtpSession s = new ZmtpSession(this, a, channel, settings.maxMessageBytes(), budget);
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
                s.key = channel.register(selector, 0, s);
                a.accepted.add(s);
                s.handshake(now, settings.handshakeTimeout().toNanos());
            } catch (IOException | ZmtpException e) {
                a.accepted.remove(s);
                s.close();
            }
        }
    }

    /** Timeouts, heartbeats and due reconnects, every {@link #TICK_NANOS}. */
    private void tick(long now) {
        for (int i = endpoints.size() - 1; i >= 0; i--) {
            ZmtpEndpoint e = endpoints.get(i);
            if (e instanceof ZmtpConnector c) {
                if (c.session != null) {
                    tick(c.session, now);
                } else if (!c.opening && !c.queued && now - c.retryAt >= 0) {
                    queue(c);
                }
            } else if (e instanceof ZmtpAcceptor a) {
                for (int j = a.accepted.size() - 1; j >= 0; j--) {
                    tick(a.accepted.get(j), now);
                }
                if (a.acceptAgainAt != 0 && now - a.acceptAgainAt >= 0 && a.key.isValid()) {
                    a.acceptAgainAt = 0;
                    a.key.interestOps(SelectionKey.OP_ACCEPT);
                }
            }
        }
    }

    private void tick(ZmtpSession s, long now) {
        try {
            s.tick(now, settings, scratch);
        } catch (ZmtpException e) {
            drop(s, e.failure(), now);
        } catch (IOException e) {
            drop(s, new ZmtpFailure.Lost(reason(e)), now);
        }
    }

    /** What an exception says, without its class name where it has a message. */
    static String reason(Throwable e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static void closeQuietly(SocketChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing else to release
            }
        }
    }

    /** Closes every connection and the selector. */
    @Override
    public void close() {
        for (ZmtpEndpoint e : new ArrayList<>(endpoints)) {
            close(e);
        }
        try {
            selector.close();
        } catch (IOException ignored) {
            // nothing else to release
        }
    }
}
