package dev.kvindexer.zmq.zmtp;

import java.util.List;

/**
 * An endpoint the subscriber connects to: at most one connection at a time, made again after every loss, with a
 * back-off that doubles while attempts fail and a longer pause after a publisher broke the protocol.
 */
final class ZmtpConnector extends ZmtpEndpoint {
    final ZmtpAddress address;
    ZmtpSession session;
    /** In the subscriber's queue of connects to start. */
    boolean queued;
    /** Counted among the subscriber's connects in progress: looking up, connecting or in the handshake. */
    boolean opening;
    /** With no session: System.nanoTime() of the next attempt. */
    long retryAt;

    private long backoff;

    ZmtpConnector(String endpoint, Object attachment, ZmtpAddress address, long firstBackoff) {
        super(endpoint, attachment);
        this.address = address;
        this.backoff = firstBackoff;
    }

    @Override
    List<ZmtpSession> sessions() {
        return session == null ? List.of() : List.of(session);
    }

    /** A publisher answered the handshake: the next loss is retried after the shortest back-off again. */
    void established(long firstBackoff) {
        backoff = firstBackoff;
    }

    /** Schedules the next attempt after {@code why}. */
    void retryLater(long now, ZmtpFailure why, ZmtpConfig settings) {
        long delay = why.slowRetry()
                ? Math.max(backoff, settings.protocolErrorDelay().toNanos())
                : backoff;
        retryAt = now + delay;
        backoff = Math.min(backoff * 2, settings.reconnectMax().toNanos());
    }
}
