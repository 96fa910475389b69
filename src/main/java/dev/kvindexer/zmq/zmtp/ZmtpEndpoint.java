package dev.kvindexer.zmq.zmtp;

import java.util.List;

/**
 * One endpoint a {@link ZmtpSubscriber} keeps subscribed, as its owner sees it: the endpoint text, whatever the owner
 * attached, whether a publisher is connected, and whether its messages may be read now.
 */
public abstract sealed class ZmtpEndpoint permits ZmtpConnector, ZmtpAcceptor {
    private final String endpoint;
    private final Object attachment;
    /** Cleared by the owner to hold messages back in the publisher's queue (TCP pushes back on it). */
    boolean reading = true;

    boolean closed;
    /** Where it sits in the subscriber's list, for removal in constant time. */
    int slot;

    ZmtpEndpoint(String endpoint, Object attachment) {
        this.endpoint = endpoint;
        this.attachment = attachment;
    }

    public String endpoint() {
        return endpoint;
    }

    public Object attachment() {
        return attachment;
    }

    /** Bound for publishers to connect to, rather than connecting to one. */
    public boolean binds() {
        return this instanceof ZmtpAcceptor;
    }

    /** Whether a publisher is connected and past the handshake. */
    public boolean connected() {
        for (ZmtpSession s : sessions()) {
            if (s.phase == ZmtpSession.Phase.ACTIVE) {
                return true;
            }
        }
        return false;
    }

    /** Its connections now (one at most when it connects itself). */
    abstract List<ZmtpSession> sessions();

    @Override
    public String toString() {
        return endpoint;
    }
}
