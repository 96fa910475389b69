package dev.kvindexer.zmq;

import org.zeromq.ZMQ;

/**
 * Socket options of the JeroMQ sockets that talk to another process (replica-sync peers): the
 * reference's reconnect and heartbeat settings, a size limit, and a short handshake timeout.
 */
public final class ZmqPeerOptions {
    static final int HANDSHAKE_MILLIS = 500;

    private ZmqPeerOptions() {}

    /**
     * Applies the options before the socket connects or binds. The size limit is checked by JeroMQ against a frame's
     * declared length before it allocates the frame, so a hostile header cannot make it reserve memory.
     */
    public static void apply(ZMQ.Socket s, long maxMessageBytes) {
        s.setLinger(0);
        s.setMaxMsgSize(maxMessageBytes);
        s.setReconnectIVL(100);
        s.setReconnectIVLMax(5000);
        s.setTCPKeepAlive(1);
        s.setHeartbeatIvl(5000);
        s.setHeartbeatTimeout(15000);
        s.setHeartbeatTtl(15000);
        // JeroMQ 0.6.0 now and then leaves a loopback connect hanging in the ZMTP handshake forever (the connecting
        // side never reads the peer's greeting); a handshake timeout makes it drop and reconnect.
        s.setHandshakeIvl(HANDSHAKE_MILLIS);
    }
}
