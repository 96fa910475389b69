package dev.kvindexer.ingest;

import java.util.ArrayList;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import dev.kvindexer.config.ZmqEndpoint;
import dev.kvindexer.config.ZmqPeerOptions;

/** Creates listener sockets with the reference's options (SPEC §3.3) and a high-water mark for bursts. */
final class ZmqSockets {
    static final int RECEIVE_HWM = 100_000;

    private ZmqSockets() {
    }

    /** A SUB for all topics with the listener options, not yet connected (so a monitor can be attached first). */
    static ZMQ.Socket subscriber(ZContext ctx, String endpoint, long maxMessageBytes) {
        ZMQ.Socket s = ctx.createSocket(SocketType.SUB);
        applyCommon(s, endpoint, maxMessageBytes);
        s.setRcvHWM(RECEIVE_HWM);
        s.subscribe(new byte[0]);
        return s;
    }

    /** Connects the SUB to the engine, or binds it for {@code tcp://*:port} (SPEC §3.1 bind mode). */
    static void attach(ZMQ.Socket s, String endpoint) {
        if (ZmqEndpoint.bindsLocally(endpoint)) {
            s.bind(endpoint);
        } else {
            s.connect(endpoint);
        }
    }

    /** One whole multipart message, or null when none is there (DONTWAIT) or the receive timed out. */
    static List<byte[]> receiveMessage(ZMQ.Socket s, int flags) {
        byte[] first = s.recv(flags);
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(4);
        frames.add(first);
        while (s.hasReceiveMore()) {
            frames.add(s.recv(0));
        }
        return frames;
    }

    /** {@link ZmqPeerOptions} plus IPv6 when the endpoint needs it. */
    static void applyCommon(ZMQ.Socket s, String endpoint, long maxMessageBytes) {
        ZmqPeerOptions.apply(s, maxMessageBytes);
        s.setIPv6(ZmqEndpoint.isIpv6(endpoint));
    }
}
