package dev.kvindexer.ingest;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Creates listener sockets with the reference's options (SPEC §3.3) and a high-water mark for bursts. */
final class ZmqSockets {
    static final int RECEIVE_HWM = 100_000;

    private ZmqSockets() {
    }

    /** A SUB for all topics, connected (or bound, for {@code tcp://*:port}) to the endpoint. */
    static ZMQ.Socket subscriber(ZContext ctx, String endpoint) {
        ZMQ.Socket s = ctx.createSocket(SocketType.SUB);
        try {
            applyCommon(s, endpoint);
            s.setRcvHWM(RECEIVE_HWM);
            s.subscribe(new byte[0]);
            if (ZmqEndpoint.bindsLocally(endpoint)) {
                s.bind(endpoint);
            } else {
                s.connect(endpoint);
            }
            return s;
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    static void applyCommon(ZMQ.Socket s, String endpoint) {
        s.setLinger(0);
        s.setReconnectIVL(100);
        s.setReconnectIVLMax(5000);
        s.setTCPKeepAlive(1);
        s.setHeartbeatIvl(5000);
        s.setHeartbeatTimeout(15000);
        s.setHeartbeatTtl(15000);
        s.setIPv6(ZmqEndpoint.isIpv6(endpoint));
    }
}
