package dev.kvindexer.zmq.zmtp;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * How a {@link ZmtpSubscriber} connects, heartbeats and limits what it takes.
 *
 * @param maxMessageBytes    largest message taken; a frame header that would pass it ends the connection
 * @param connectTimeout     a TCP connect not done by then is given up and tried again
 * @param handshakeTimeout   a connection without the publisher's greeting and READY by then is dropped
 * @param heartbeatInterval  a PING goes out when nothing was sent for this long; its TTL is the timeout
 * @param heartbeatTimeout   a connection silent for this long (no message, no PONG) is dropped
 * @param reconnectMin       the first wait before a connection is made again, doubling while attempts fail
 * @param reconnectMax       the longest wait between attempts
 * @param protocolErrorDelay the least wait before reconnecting to a publisher that broke the protocol
 * @param maxConnecting      connects and handshakes in progress at once (a publisher accepts a backlog of 100)
 * @param messageTimeout     a frame or message must arrive whole this long after its first byte, or the connection
 *                           is dropped; time the subscriber itself held reading back does not count
 */
public record ZmtpConfig(
        long maxMessageBytes,
        Duration connectTimeout,
        Duration handshakeTimeout,
        Duration heartbeatInterval,
        Duration heartbeatTimeout,
        Duration reconnectMin,
        Duration reconnectMax,
        Duration protocolErrorDelay,
        int maxConnecting,
        Duration messageTimeout) {
    /** The reference listener's reconnect and heartbeat options (docs/protocol/zmq.md#socket-options). */
    public static ZmtpConfig defaults(long maxMessageBytes) {
        return new ZmtpConfig(
                maxMessageBytes,
                Duration.ofSeconds(5),
                Duration.ofSeconds(5),
                Duration.ofSeconds(5),
                Duration.ofSeconds(15),
                Duration.ofMillis(100),
                Duration.ofSeconds(5),
                Duration.ofSeconds(1),
                128,
                Duration.ofSeconds(15));
    }

    public ZmtpConfig withHeartbeat(Duration interval, Duration timeout) {
        return with(c -> {
            c.heartbeatInterval = interval;
            c.heartbeatTimeout = timeout;
        });
    }

    public ZmtpConfig withMessageTimeout(Duration timeout) {
        return with(c -> c.messageTimeout = timeout);
    }

    public ZmtpConfig withProtocolErrorDelay(Duration delay) {
        return with(c -> c.protocolErrorDelay = delay);
    }

    /** Our PING: its TTL asks the publisher to drop us after the heartbeat timeout without a byte from us. */
    byte[] ping() {
        return ZmtpCommand.ping((int) (heartbeatTimeout.toMillis() / 100));
    }

    /** Every field once, for the withers: each wither names only what it changes. */
    private static final class Copy {
        private long maxMessageBytes;
        private Duration connectTimeout;
        private Duration handshakeTimeout;
        private Duration heartbeatInterval;
        private Duration heartbeatTimeout;
        private Duration reconnectMin;
        private Duration reconnectMax;
        private Duration protocolErrorDelay;
        private int maxConnecting;
        private Duration messageTimeout;

        private Copy(ZmtpConfig c) {
            maxMessageBytes = c.maxMessageBytes;
            connectTimeout = c.connectTimeout;
            handshakeTimeout = c.handshakeTimeout;
            heartbeatInterval = c.heartbeatInterval;
            heartbeatTimeout = c.heartbeatTimeout;
            reconnectMin = c.reconnectMin;
            reconnectMax = c.reconnectMax;
            protocolErrorDelay = c.protocolErrorDelay;
            maxConnecting = c.maxConnecting;
            messageTimeout = c.messageTimeout;
        }

        private ZmtpConfig build() {
            return new ZmtpConfig(
                    maxMessageBytes,
                    connectTimeout,
                    handshakeTimeout,
                    heartbeatInterval,
                    heartbeatTimeout,
                    reconnectMin,
                    reconnectMax,
                    protocolErrorDelay,
                    maxConnecting,
                    messageTimeout);
        }
    }

    /** These settings with {@code change} made to a copy of them. */
    private ZmtpConfig with(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.build();
    }
}
