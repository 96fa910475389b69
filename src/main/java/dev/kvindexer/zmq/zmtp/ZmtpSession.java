package dev.kvindexer.zmq.zmtp;

import dev.kvindexer.net.NetworkBudget;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.List;

/**
 * One connection to a publisher, as a SUB: the greeting and READY both ways, the subscription, then messages in and
 * heartbeats both ways. Lives on the subscriber's thread; whatever goes wrong is thrown as a {@link ZmtpException}
 * or an {@link IOException} for the subscriber to end the connection with.
 */
final class ZmtpSession implements ZmtpFrameReader.Sink {
    enum Phase {
        CONNECTING,
        HANDSHAKING,
        ACTIVE
    }

    /** Reads per readiness, so one busy publisher cannot hold the thread from the others. */
    private static final int READS_PER_TURN = 4;
    /** Read turns at most before a deadline is judged: enough for any message the limit allows to arrive. */
    private static final int DRAIN_TURNS = 1024;
    /**
     * What we may owe a peer that does not read (PONGs, our own PINGs): a few hundred replies. Past it the peer is
     * not listening, and the connection is dropped rather than the queue grown.
     */
    static final int MAX_UNSENT_BYTES = 16 * 1024;
    /** A one-frame message: subscribe (1) to the empty topic, i.e. to everything. */
    private static final byte[] SUBSCRIBE_ALL = {0x00, 0x01, 0x01};

    private static final byte[] OPENING = opening();

    final ZmtpEndpoint endpoint;
    final SocketChannel channel;
    private final ZmtpSubscriber subscriber;
    private final ZmtpFrameReader frames;
    private final NetworkBudget budget;
    SelectionKey key;
    Phase phase = Phase.CONNECTING;
    /** The peer's greeting, checked as it arrives. */
    private final ZmtpGreeting.Incoming peerGreeting = new ZmtpGreeting.Incoming();

    private ArrayDeque<ByteBuffer> unsent;
    /** Bytes waiting in {@link #unsent}, reserved from the budget. */
    private long unsentBytes;
    /** While a read is taken apart: replies gather and go out together at its end. */
    private boolean replying;
    /** System.nanoTime() of the last byte in and out; the end of the current connect or handshake. */
    long lastReceived;

    long lastSent;
    long deadline;

    ZmtpSession(
            ZmtpSubscriber subscriber,
            ZmtpEndpoint endpoint,
            SocketChannel channel,
            long maxMessageBytes,
            NetworkBudget budget) {
        this.subscriber = subscriber;
        this.endpoint = endpoint;
        this.channel = channel;
        this.budget = budget;
        this.frames = new ZmtpFrameReader(maxMessageBytes, budget);
    }

    private static byte[] opening() {
        byte[] ready = ZmtpCommand.readyAsSubscriber();
        byte[] both = new byte[ZmtpGreeting.SIZE + ready.length];
        System.arraycopy(ZmtpGreeting.OURS, 0, both, 0, ZmtpGreeting.SIZE);
        System.arraycopy(ready, 0, both, ZmtpGreeting.SIZE, ready.length);
        return both;
    }

    /** The connection is up: our greeting and READY go out together, before the peer's greeting is seen. */
    void handshake(long now, long timeoutNanos) throws IOException, ZmtpException {
        phase = Phase.HANDSHAKING;
        deadline = now + timeoutNanos;
        lastReceived = now;
        send(OPENING, now);
        interest();
    }

    /** Whether to read now: always while the handshake runs, afterwards as the endpoint's owner allows. */
    private boolean wantsRead() {
        return phase == Phase.HANDSHAKING || (phase == Phase.ACTIVE && endpoint.reading);
    }

    /** Sets the selector's interest to what the session waits for now. */
    void interest() {
        if (!key.isValid()) {
            return;
        }
        int ops = phase == Phase.CONNECTING
                ? SelectionKey.OP_CONNECT
                : (wantsRead() ? SelectionKey.OP_READ : 0)
                        | (unsent != null && !unsent.isEmpty() ? SelectionKey.OP_WRITE : 0);
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }

    /**
     * Reads what has arrived, a bounded amount, into {@code scratch} and on through the frame reader; the replies it
     * calls for go out together once it is read. Returns the bytes read.
     */
    long read(ByteBuffer scratch, long now) throws IOException, ZmtpException {
        long total = 0;
        replying = true;
        try {
            for (int turn = 0; turn < READS_PER_TURN && wantsRead(); turn++) {
                scratch.clear();
                int n = channel.read(scratch);
                if (n < 0) {
                    throw new ZmtpException(new ZmtpFailure.Lost("closed by the publisher"));
                }
                if (n == 0) {
                    break;
                }
                total += n;
                lastReceived = now;
                scratch.flip();
                take(scratch, now);
                if (n < scratch.capacity()) {
                    break;
                }
            }
        } finally {
            replying = false;
        }
        if (unsentBytes > 0 && key.isValid()) {
            flush(now);
        }
        return total;
    }

    /**
     * Before a deadline ends the connection, what the publisher has sent is read: a thread that fell behind (a busy
     * machine) must not take its own slowness for the publisher's.
     */
    private void drain(ByteBuffer scratch, long now) throws IOException, ZmtpException {
        for (int i = 0; i < DRAIN_TURNS && read(scratch, now) > 0; i++) {
            // keep reading while bytes wait
        }
    }

    private void take(ByteBuffer in, long now) throws ZmtpException {
        if (peerGreeting.take(in)) {
            frames.read(in, this, now);
        }
    }

    @Override
    public void command(byte[] body) throws ZmtpException {
        ZmtpCommand c = ZmtpCommand.parse(body);
        if (c instanceof ZmtpCommand.Ready r) {
            ready(r.socketType());
        } else if (c instanceof ZmtpCommand.Ping p) {
            sendOrFail(ZmtpCommand.pong(p.context()));
        } else if (c instanceof ZmtpCommand.Error e) {
            throw ZmtpException.broken("the publisher sent ERROR " + e.reason());
        }
    }

    private void ready(String socketType) throws ZmtpException {
        if (phase == Phase.ACTIVE) {
            throw ZmtpException.broken("a second READY");
        }
        if (!"PUB".equals(socketType) && !"XPUB".equals(socketType)) {
            throw ZmtpException.broken("the peer is a " + socketType + " socket, not a publisher");
        }
        sendOrFail(SUBSCRIBE_ALL);
        phase = Phase.ACTIVE;
        interest();
        subscriber.established(this);
    }

    @Override
    public void message(List<byte[]> message, long held) throws ZmtpException {
        if (phase != Phase.ACTIVE) {
            budget.release(held);
            throw ZmtpException.broken("a message before the handshake completed");
        }
        subscriber.delivered(this, message, held);
    }

    /** A heartbeat round: ends a connect, handshake or connection that took or stayed silent too long. */
    void tick(long now, ZmtpConfig settings, ByteBuffer scratch) throws ZmtpException, IOException {
        if (overdue(now, settings)) {
            drain(scratch, now);
        }
        if (phase == Phase.CONNECTING && now - deadline > 0) {
            throw new ZmtpException(new ZmtpFailure.Unreachable(
                    "no connection within " + settings.connectTimeout().toMillis() + " ms"));
        }
        if (phase == Phase.HANDSHAKING && now - deadline > 0) {
            throw new ZmtpException(new ZmtpFailure.Unreachable("no ZMTP handshake within "
                    + settings.handshakeTimeout().toMillis() + " ms ("
                    + peerGreeting.progress()
                    + ")"));
        }
        if (phase != Phase.ACTIVE) {
            return;
        }
        // While the owner holds reading back, silence and slowness are ours, not the publisher's.
        if (endpoint.reading && now - lastReceived > settings.heartbeatTimeout().toNanos()) {
            throw new ZmtpException(new ZmtpFailure.Lost(
                    "silent for " + settings.heartbeatTimeout().toMillis() + " ms (heartbeat timeout)"));
        }
        long started = frames.startedAt();
        if (endpoint.reading
                && started != 0
                && now - started > settings.messageTimeout().toNanos()) {
            throw new ZmtpException(new ZmtpFailure.Stalled(
                    "a frame or message", settings.messageTimeout().toMillis()));
        }
        // Our PING's TTL has the publisher drop us after that long without a byte from us, however much it sends.
        if (now - lastSent > settings.heartbeatInterval().toNanos()) {
            send(settings.ping(), now);
        }
    }

    /** Whether a deadline has passed: the handshake's, the heartbeat's, or that of a frame or message under way. */
    private boolean overdue(long now, ZmtpConfig settings) {
        if (phase == Phase.HANDSHAKING) {
            return now - deadline > 0;
        }
        if (phase != Phase.ACTIVE || !endpoint.reading) {
            return false;
        }
        long started = frames.startedAt();
        return now - lastReceived > settings.heartbeatTimeout().toNanos()
                || (started != 0 && now - started > settings.messageTimeout().toNanos());
    }

    private void sendOrFail(byte[] bytes) throws ZmtpException {
        try {
            send(bytes, System.nanoTime());
        } catch (IOException e) {
            throw new ZmtpException(new ZmtpFailure.Lost(ZmtpSubscriber.reason(e)));
        }
    }

    /**
     * Queues {@code bytes} and writes what the socket takes, at once or, while a read is taken apart, together at
     * its end; what waits stays within {@link #MAX_UNSENT_BYTES}, past which the peer is taken not to read.
     */
    private void send(byte[] bytes, long now) throws IOException, ZmtpException {
        int n = bytes.length;
        if (unsentBytes + n > MAX_UNSENT_BYTES) {
            flush(now);
            if (unsentBytes + n > MAX_UNSENT_BYTES) {
                throw new ZmtpException(new ZmtpFailure.Unread(unsentBytes + n));
            }
        }
        if (!budget.tryReserve(n, unsentBytes)) {
            throw new ZmtpException(new ZmtpFailure.OverBudget(unsentBytes, n, budget.limit()));
        }
        unsentBytes += n;
        if (unsent == null) {
            unsent = new ArrayDeque<>(2);
        }
        unsent.add(ByteBuffer.wrap(bytes));
        if (!replying) {
            flush(now);
        }
    }

    /** Writes what waits, in one gathering write, and waits for the socket to take the rest. */
    void flush(long now) throws IOException {
        if (unsent != null && !unsent.isEmpty()) {
            long written = channel.write(unsent.toArray(new ByteBuffer[0]));
            if (written > 0) {
                unsentBytes -= written;
                budget.release(written);
                lastSent = now;
            }
            while (!unsent.isEmpty() && !unsent.peek().hasRemaining()) {
                unsent.poll();
            }
        }
        interest();
    }

    /** Reading was held back and is allowed again: silence, and the deadline of a message under way, start now. */
    void resumed(long now) {
        lastReceived = now;
        frames.restartClock(now);
        interest();
    }

    /** Budget bytes this connection holds: its message under way and the replies it has not taken. */
    long held() {
        return frames.held() + unsentBytes;
    }

    void close() {
        frames.discard();
        budget.release(unsentBytes);
        unsentBytes = 0;
        if (unsent != null) {
            unsent.clear();
        }
        if (key != null) {
            key.cancel();
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing is all that is left to do with it
        }
    }
}
