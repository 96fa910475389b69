package dev.kvindexer.zmq.zmtp;

import dev.kvindexer.net.NetworkBudget;
import java.io.IOException;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A ZMTP 3 DEALER for one request and its replies to a ROUTER (an engine's replay endpoint), driven by the calling
 * thread, which it blocks for at most the time it is given. It holds what it reads under the same bounds as the
 * subscriber: frames grow as bytes arrive, parts are bounded, every byte is reserved from the node's budget until the
 * caller lets the message go, a frame under way must finish within the message timeout, and heartbeat replies owed
 * to a peer that does not read are bounded.
 */
public final class ZmtpDealer implements AutoCloseable {
    private static final int READ_BUFFER_BYTES = 64 * 1024;

    /** One whole reply: its frames, and the budget bytes they hold until {@link #release}d. */
    public record Message(List<byte[]> frames, long held) {}

    private final ZmtpConfig settings;
    private final NetworkBudget budget;
    private final SocketChannel channel;
    private final Selector selector;
    private final SelectionKey key;
    private final ZmtpFrameReader reader;
    private final ByteBuffer scratch = ByteBuffer.allocate(READ_BUFFER_BYTES);
    private final ArrayDeque<Message> received = new ArrayDeque<>();
    private final ZmtpGreeting.Incoming peerGreeting = new ZmtpGreeting.Incoming();
    private boolean ready;
    /** Heartbeat replies the peer has not taken yet, reserved from the budget. */
    private final ArrayDeque<ByteBuffer> unsent = new ArrayDeque<>();

    private long unsentBytes;
    private boolean closed;

    private ZmtpDealer(ZmtpConfig settings, NetworkBudget budget, SocketChannel channel, Selector selector)
            throws IOException {
        this.settings = settings;
        this.budget = budget;
        this.channel = channel;
        this.selector = selector;
        this.key = channel.register(selector, SelectionKey.OP_CONNECT);
        this.reader = new ZmtpFrameReader(settings.maxMessageBytes(), budget);
    }

    /**
     * Connects to the ROUTER at {@code endpoint} ({@code tcp://host:port} or {@code ipc://path}) and completes the
     * handshake, within the settings' connect and handshake timeouts; throws when it cannot.
     */
    public static ZmtpDealer connect(String endpoint, ZmtpConfig settings, NetworkBudget budget) throws IOException {
        ZmtpAddress address;
        try {
            address = ZmtpAddress.parse(endpoint);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        SocketAddress to;
        if (address instanceof ZmtpAddress.Tcp tcp) {
            to = tcp.resolve();
        } else if (address instanceof ZmtpAddress.Ipc ipc) {
            to = UnixDomainSocketAddress.of(ipc.path());
        } else {
            throw new IOException("a replay endpoint must be tcp://host:port or ipc://path, got " + endpoint);
        }
        boolean unix = to instanceof UnixDomainSocketAddress;
        SocketChannel channel = unix ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
        Selector selector = null;
        ZmtpDealer d = null;
        try {
            channel.configureBlocking(false);
            if (!unix) {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
            selector = Selector.open();
            d = new ZmtpDealer(settings, budget, channel, selector);
            d.open(to);
            return d;
        } catch (IOException | RuntimeException e) {
            if (d != null) {
                d.close();
            } else {
                channel.close();
                if (selector != null) {
                    selector.close();
                }
            }
            throw e;
        }
    }

    private void open(SocketAddress to) throws IOException {
        long start = System.nanoTime();
        if (!channel.connect(to)) {
            long deadline = start + settings.connectTimeout().toNanos();
            while (!channel.finishConnect()) {
                if (!await(SelectionKey.OP_CONNECT, deadline)) {
                    throw new IOException("cannot connect: no connection within "
                            + settings.connectTimeout().toMillis() + " ms");
                }
            }
        }
        byte[] ready = ZmtpCommand.ready("DEALER");
        ByteBuffer opening = ByteBuffer.allocate(ZmtpGreeting.SIZE + ready.length);
        opening.put(ZmtpGreeting.OURS).put(ready).flip();
        long deadline = System.nanoTime() + settings.handshakeTimeout().toNanos();
        writeFully(opening, deadline);
        while (!this.ready) {
            if (!readSome(deadline)) {
                throw new IOException("cannot connect: no ZMTP handshake within "
                        + settings.handshakeTimeout().toMillis() + " ms");
            }
        }
    }

    /** Sends one message of {@code frames}, within the handshake timeout. */
    public void send(byte[]... frames) throws IOException {
        int size = 0;
        for (byte[] f : frames) {
            size += (f.length > 255 ? 9 : 2) + f.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (int i = 0; i < frames.length; i++) {
            int more = i < frames.length - 1 ? 0x01 : 0;
            if (frames[i].length > 255) {
                out.put((byte) (0x02 | more)).putLong(frames[i].length);
            } else {
                out.put((byte) more).put((byte) frames[i].length);
            }
            out.put(frames[i]);
        }
        out.flip();
        writeFully(out, System.nanoTime() + settings.handshakeTimeout().toNanos());
    }

    /**
     * The next whole message, or null when none came within {@code timeout}; throws when the peer broke the
     * protocol, a limit or the message timeout, or went away. The message's bytes stay reserved until released.
     */
    public Message receive(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (received.isEmpty()) {
            long started = reader.startedAt();
            if (started != 0
                    && System.nanoTime() - started > settings.messageTimeout().toNanos()) {
                throw new IOException(new ZmtpFailure.Stalled(
                                "a frame or message", settings.messageTimeout().toMillis())
                        .describe());
            }
            long until = started == 0
                    ? deadline
                    : Math.min(deadline, started + settings.messageTimeout().toNanos());
            if (!readSome(until) && System.nanoTime() - deadline >= 0) {
                return null;
            }
        }
        return received.poll();
    }

    /** Gives a message's bytes back to the budget. */
    public void release(Message m) {
        budget.release(m.held());
    }

    /** Reads what arrives before {@code deadline}; false when nothing did. */
    private boolean readSome(long deadline) throws IOException {
        if (!await(SelectionKey.OP_READ, deadline)) {
            return false;
        }
        scratch.clear();
        int n = channel.read(scratch);
        if (n < 0) {
            throw new IOException(new ZmtpFailure.Lost("closed by the replay peer").describe());
        }
        scratch.flip();
        try {
            take(scratch, System.nanoTime());
        } catch (ZmtpException e) {
            throw new IOException(e.getMessage());
        }
        flushReplies();
        return n > 0;
    }

    private void take(ByteBuffer in, long now) throws ZmtpException {
        if (!peerGreeting.take(in)) {
            return;
        }
        reader.read(
                in,
                new ZmtpFrameReader.Sink() {
                    @Override
                    public void command(byte[] body) throws ZmtpException {
                        ZmtpCommand c = ZmtpCommand.parse(body);
                        if (c instanceof ZmtpCommand.Ready r) {
                            if (ready) {
                                throw ZmtpException.broken("a second READY");
                            }
                            if (!"ROUTER".equals(r.socketType())) {
                                throw ZmtpException.broken(
                                        "the replay peer is a " + r.socketType() + " socket, not a ROUTER");
                            }
                            ready = true;
                        } else if (c instanceof ZmtpCommand.Ping p) {
                            reply(ZmtpCommand.pong(p.context()));
                        } else if (c instanceof ZmtpCommand.Error e) {
                            throw ZmtpException.broken("the replay peer sent ERROR " + e.reason());
                        }
                    }

                    @Override
                    public void message(List<byte[]> frames, long held) throws ZmtpException {
                        if (!ready) {
                            budget.release(held);
                            throw ZmtpException.broken("a message before the handshake completed");
                        }
                        received.add(new Message(frames, held));
                    }
                },
                now);
    }

    private void reply(byte[] bytes) throws ZmtpException {
        if (unsentBytes + bytes.length > ZmtpSession.MAX_UNSENT_BYTES
                || !budget.tryReserve(bytes.length, unsentBytes)) {
            throw new ZmtpException(new ZmtpFailure.Unread(unsentBytes + bytes.length));
        }
        unsentBytes += bytes.length;
        unsent.add(ByteBuffer.wrap(bytes));
    }

    private void flushReplies() throws IOException {
        if (unsent.isEmpty()) {
            return;
        }
        long written = channel.write(unsent.toArray(new ByteBuffer[0]));
        unsentBytes -= written;
        budget.release(written);
        while (!unsent.isEmpty() && !unsent.peek().hasRemaining()) {
            unsent.poll();
        }
    }

    private void writeFully(ByteBuffer out, long deadline) throws IOException {
        while (out.hasRemaining()) {
            channel.write(out);
            if (out.hasRemaining() && !await(SelectionKey.OP_WRITE, deadline)) {
                throw new IOException("the replay peer takes nothing we send");
            }
        }
    }

    /** Waits until the channel is ready for {@code op} or {@code deadline} passes; false on the deadline. */
    private boolean await(int op, long deadline) throws IOException {
        key.interestOps(op);
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            selector.selectNow();
        } else {
            selector.select(Math.max(1, left / 1_000_000));
        }
        boolean isReady = !selector.selectedKeys().isEmpty();
        selector.selectedKeys().clear();
        return isReady;
    }

    /** Closes the connection and gives back every byte it held; messages not yet released stay the caller's. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        reader.discard();
        budget.release(unsentBytes);
        unsentBytes = 0;
        for (Message m : new ArrayList<>(received)) {
            budget.release(m.held());
        }
        received.clear();
        try {
            selector.close();
        } catch (IOException ignored) {
            // nothing else to release
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing else to release
        }
    }
}
