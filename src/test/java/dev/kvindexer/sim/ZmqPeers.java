package dev.kvindexer.sim;

import dev.kvindexer.wire.LiveFrames;
import java.util.ArrayList;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** The indexer side of an engine for tests: a SUB on its live endpoint and DEALERs on its replay endpoint. */
final class ZmqPeers implements AutoCloseable {
    static final int RECV_TIMEOUT_MS = 5_000;
    /**
     * JeroMQ 0.6.0: about one loopback connect in ten stalls for good on the connecting side (measured here: nothing
     * flows either way, no reconnect). A short handshake deadline on the connecting socket tears such a connection
     * down and retries; on the binding side it does not help.
     */
    static final int HANDSHAKE_MS = 500;

    private final ZContext ctx = new ZContext();

    ZMQ.Socket subscriber(String endpoint) {
        ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
        sub.setLinger(0);
        sub.setReceiveTimeOut(RECV_TIMEOUT_MS);
        sub.setReconnectIVL(20);
        sub.setHandshakeIvl(HANDSHAKE_MS);
        sub.subscribe(new byte[0]);
        sub.connect(endpoint);
        return sub;
    }

    ZMQ.Socket dealer(String endpoint) {
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        dealer.setLinger(0);
        dealer.setReceiveTimeOut(RECV_TIMEOUT_MS);
        dealer.setHandshakeIvl(HANDSHAKE_MS);
        dealer.connect(endpoint);
        return dealer;
    }

    /** One multipart message, or an AssertionError if none arrives in time. */
    static List<byte[]> recv(ZMQ.Socket socket) {
        List<byte[]> frames = new ArrayList<>();
        byte[] first = socket.recv(0);
        if (first == null) {
            throw new AssertionError("no message within " + RECV_TIMEOUT_MS + " ms");
        }
        frames.add(first);
        while (socket.hasReceiveMore()) {
            frames.add(socket.recv(0));
        }
        return frames;
    }

    static void send(ZMQ.Socket socket, byte[]... frames) {
        for (int i = 0; i < frames.length; i++) {
            socket.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    /** Sends the standard replay request {@code ["", be64(start)]}. */
    static void requestReplay(ZMQ.Socket dealer, long start) {
        send(dealer, new byte[0], LiveFrames.seqFrame(start));
    }

    @Override
    public void close() {
        ctx.close();
    }
}
