package dev.kvindexer.ingest;

import dev.kvindexer.zmq.ZmqEndpoint;
import dev.kvindexer.zmq.ZmqPeerOptions;
import java.util.ArrayList;
import java.util.List;
import org.zeromq.ZMQ;

/**
 * Options and receiving for the replay DEALER, the one JeroMQ socket ingest still opens
 * (docs/protocol/zmq.md#socket-options, docs/protocol/zmq.md#replay-protocol).
 */
final class ZmqSockets {
    private ZmqSockets() {}

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
