package dev.kvindexer.config;

import java.time.Duration;

/**
 * What the node holds on behalf of the network, and how long it waits for what a peer has begun to send.
 *
 * @param maxBytes       bytes all ports together may hold for their peers ({@code --max-network-memory}): frames
 *                       and messages received in part or waiting to be applied, replies a peer has not read
 * @param messageTimeout a frame or message begun by an engine or cluster peer must arrive whole this long after its
 *                       first byte ({@code --message-timeout}); a byte now and then does not keep it alive
 */
public record NetworkConfig(long maxBytes, Duration messageTimeout) {
    /** A fifth of the heap: beside the index's half, it leaves the rest for requests and the collector. */
    public static final String DEFAULT_SPEC = "20%";

    public static final Duration DEFAULT_MESSAGE_TIMEOUT = Duration.ofSeconds(15);

    public NetworkConfig {
        if (maxBytes < 1024 * 1024) {
            throw new IllegalArgumentException(
                    "--max-network-memory must be at least 1 MiB, got " + maxBytes + " bytes");
        }
        if (messageTimeout.isNegative() || messageTimeout.isZero()) {
            throw new IllegalArgumentException("--message-timeout must be positive, got " + messageTimeout);
        }
    }

    public static NetworkConfig defaults() {
        return new NetworkConfig(
                HeapShare.parse(
                        "--max-network-memory",
                        DEFAULT_SPEC,
                        Runtime.getRuntime().maxMemory()),
                DEFAULT_MESSAGE_TIMEOUT);
    }

    /** {@code --max-network-memory} as bytes ({@code 64m}) or a share of the heap ({@code 20%}). */
    public static NetworkConfig parse(String spec, long maxHeap, Duration messageTimeout) {
        return new NetworkConfig(HeapShare.parse("--max-network-memory", spec, maxHeap), messageTimeout);
    }
}
