package dev.kvindexer.config;

import java.util.List;

/**
 * Settings of the selection service ({@code select-service}, or {@code serve --select-port}), SPEC §12.14. The
 * router's cost settings come from Dynamo's environment ({@code select.SelectionConfig}).
 *
 * @param host                  HTTP bind address
 * @param port                  HTTP port; 0 picks a free one (tests)
 * @param cacheTtlMillis        how long a selection with an id waits for its replay booking
 * @param cacheMaxEntries       at most this many pending selections
 * @param cacheMaxBytes         at most about this many bytes of pending selections
 * @param cleanupIntervalMillis how often stale reservations are looked for
 * @param replicaSyncPort       the ZMQ PUB port for replica sync, 0 when off
 * @param replicaSyncPeers      peer selectors' PUB endpoints to subscribe to
 * @param http                  idle and request timeouts of HTTP connections
 */
public record SelectServiceConfig(String host, int port, long cacheTtlMillis, int cacheMaxEntries, long cacheMaxBytes,
                                  long cleanupIntervalMillis, int replicaSyncPort, List<String> replicaSyncPeers,
                                  HttpLimits http) {
    public static final int DEFAULT_PORT = 8092;
    public static final long DEFAULT_CACHE_TTL_MILLIS = 120_000;
    public static final int DEFAULT_CACHE_MAX_ENTRIES = 4096;
    public static final long DEFAULT_CACHE_MAX_BYTES = 268_435_456L;
    /** The reference's limit on every route. */
    public static final long BODY_LIMIT = 8L * 1024 * 1024;

    public SelectServiceConfig {
        http = http == null ? HttpLimits.DEFAULT : http;
        replicaSyncPeers = replicaSyncPeers == null ? List.of() : List.copyOf(replicaSyncPeers);
        if (cacheTtlMillis < 0 || cacheMaxEntries < 0 || cacheMaxBytes < 0 || cleanupIntervalMillis <= 0) {
            throw new IllegalArgumentException("selection cache bounds must be >= 0 and the cleanup interval positive");
        }
        if (replicaSyncPort < 0 || replicaSyncPort > 65535) {
            throw new IllegalArgumentException("--replica-sync-port must be between 1 and 65535");
        }
        if (!replicaSyncPeers.isEmpty() && replicaSyncPort == 0) {
            throw new IllegalArgumentException("--replica-sync-peers requires --replica-sync-port");
        }
    }

    public static SelectServiceConfig on(String host, int port) {
        return new SelectServiceConfig(host, port, DEFAULT_CACHE_TTL_MILLIS, DEFAULT_CACHE_MAX_ENTRIES,
                DEFAULT_CACHE_MAX_BYTES, 10_000, 0, List.of(), HttpLimits.DEFAULT);
    }
}
