package dev.kvindexer.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * An engine whose JeroMQ PUB connects to a bound subscriber ({@code tcp://*:port},
 * docs/protocol/zmq.md#sockets-and-roles bind mode). About one
 * JeroMQ 0.6.0 loopback connect in a few hundred stalls for good on the connecting side before its greeting (nothing
 * flows, no reconnect, whatever its handshake deadline), so a PUB that delivers nothing for a while is replaced by a
 * new one, as a restarted engine would be.
 */
public final class ConnectingPublisher implements AutoCloseable {
    private static final long PATIENCE_NANOS = Duration.ofSeconds(2).toNanos();

    private final ZContext ctx;
    private final String endpoint;
    private ZMQ.Socket pub;

    public ConnectingPublisher(ZContext ctx, String endpoint) {
        this.ctx = ctx;
        this.endpoint = endpoint;
        connect();
    }

    private void connect() {
        pub = ctx.createSocket(SocketType.PUB);
        pub.setLinger(0);
        pub.connect(endpoint);
    }

    /**
     * Sends the message built for each attempt ({@code message.apply(n)}) until {@code arrived} holds: a PUB drops
     * what it sends before the subscription reaches it.
     */
    public void sendUntil(String what, Duration timeout, LongFunction<byte[][]> message, BooleanSupplier arrived) {
        long[] attempt = {0};
        long[] since = {System.nanoTime()};
        Await.until(what, timeout, () -> {
            if (System.nanoTime() - since[0] > PATIENCE_NANOS) {
                ctx.destroySocket(pub);
                connect();
                since[0] = System.nanoTime();
            }
            byte[][] frames = message.apply(attempt[0]++);
            for (int i = 0; i < frames.length; i++) {
                pub.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
            }
            return arrived.getAsBoolean();
        });
    }

    @Override
    public void close() {
        ctx.destroySocket(pub);
    }
}
