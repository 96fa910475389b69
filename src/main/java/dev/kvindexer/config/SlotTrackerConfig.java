package dev.kvindexer.config;

import java.util.List;

/**
 * Settings of the slot tracker service ({@code slot-tracker}, or {@code serve --slot-tracker-port}).
 *
 * @param host                  HTTP bind address
 * @param port                  HTTP port; 0 picks a free one (tests)
 * @param requestTtlMillis      active requests older than this are dropped (Dynamo: 300 s)
 * @param cleanupIntervalMillis how often the expiry runs
 * @param http                  idle and request timeouts of HTTP connections
 * @param replicaSyncPort       the ZMQ PUB port for replica sync, 0 when off
 * @param replicaSyncPeers      peer trackers' PUB endpoints to subscribe to
 */
public record SlotTrackerConfig(
        String host,
        int port,
        long requestTtlMillis,
        long cleanupIntervalMillis,
        HttpConfig http,
        int replicaSyncPort,
        List<String> replicaSyncPeers) {
    public static final int DEFAULT_PORT = 8091;
    /** Requests older than this are dropped (docs/api/slot-tracker.md#ordering). */
    public static final long DEFAULT_REQUEST_TTL_MILLIS = 300_000;

    public static final long DEFAULT_CLEANUP_INTERVAL_MILLIS = 10_000;

    public SlotTrackerConfig {
        http = http == null ? HttpConfig.DEFAULT : http;
        replicaSyncPeers = replicaSyncPeers == null ? List.of() : List.copyOf(replicaSyncPeers);
        if (requestTtlMillis <= 0 || cleanupIntervalMillis <= 0) {
            throw new IllegalArgumentException("the request TTL and the cleanup interval must be positive");
        }
        if (replicaSyncPort < 0 || replicaSyncPort > 65535) {
            throw new IllegalArgumentException("--replica-sync-port must be between 1 and 65535");
        }
        if (!replicaSyncPeers.isEmpty() && replicaSyncPort == 0) {
            throw new IllegalArgumentException("--replica-sync-peers requires --replica-sync-port");
        }
    }

    /** Without replica sync. */
    public SlotTrackerConfig(
            String host, int port, long requestTtlMillis, long cleanupIntervalMillis, HttpConfig http) {
        this(host, port, requestTtlMillis, cleanupIntervalMillis, http, 0, List.of());
    }

    public static SlotTrackerConfig on(String host, int port) {
        return on(host, port, HttpConfig.DEFAULT);
    }

    public static SlotTrackerConfig on(String host, int port, HttpConfig http) {
        return new SlotTrackerConfig(host, port, DEFAULT_REQUEST_TTL_MILLIS, DEFAULT_CLEANUP_INTERVAL_MILLIS, http);
    }
}
