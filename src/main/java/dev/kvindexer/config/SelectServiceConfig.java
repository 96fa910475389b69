package dev.kvindexer.config;

import java.util.List;
import java.util.function.Consumer;

/**
 * Settings of the selection service ({@code select-service}, or {@code serve --select-port}), docs/api/selection.md#command-line-and-environment. The
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
 * @param limits                what callers and replica peers may make the service hold
 * @param security              the bearer token that guards the routes, as on the indexer's port
 * @param sessionAffinityTtlSecs the idle TTL of session bindings; 0 leaves session affinity off
 */
public record SelectServiceConfig(
        String host,
        int port,
        long cacheTtlMillis,
        int cacheMaxEntries,
        long cacheMaxBytes,
        long cleanupIntervalMillis,
        int replicaSyncPort,
        List<String> replicaSyncPeers,
        HttpConfig http,
        SelectServiceLimitsConfig limits,
        SecurityConfig security,
        long sessionAffinityTtlSecs) {
    public static final int DEFAULT_PORT = 8092;
    public static final long DEFAULT_CACHE_TTL_MILLIS = 120_000;
    public static final int DEFAULT_CACHE_MAX_ENTRIES = 4096;
    public static final long DEFAULT_CACHE_MAX_BYTES = 268_435_456L;
    /** The reference's limit on every route. */
    public static final long BODY_LIMIT = 8L * 1024 * 1024;

    public SelectServiceConfig {
        http = http == null ? HttpConfig.DEFAULT : http;
        limits = limits == null ? SelectServiceLimitsConfig.DEFAULT : limits;
        security = security == null ? SecurityConfig.NONE : security;
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
        if (sessionAffinityTtlSecs < 0) {
            throw new IllegalArgumentException("--session-affinity-ttl-secs must be positive");
        }
    }

    /** With the default limits, no token and no session affinity. */
    public SelectServiceConfig(
            String host,
            int port,
            long cacheTtlMillis,
            int cacheMaxEntries,
            long cacheMaxBytes,
            long cleanupIntervalMillis,
            int replicaSyncPort,
            List<String> replicaSyncPeers,
            HttpConfig http) {
        this(
                host,
                port,
                cacheTtlMillis,
                cacheMaxEntries,
                cacheMaxBytes,
                cleanupIntervalMillis,
                replicaSyncPort,
                replicaSyncPeers,
                http,
                SelectServiceLimitsConfig.DEFAULT,
                SecurityConfig.NONE,
                0);
    }

    public static SelectServiceConfig on(String host, int port) {
        return new SelectServiceConfig(
                host,
                port,
                DEFAULT_CACHE_TTL_MILLIS,
                DEFAULT_CACHE_MAX_ENTRIES,
                DEFAULT_CACHE_MAX_BYTES,
                10_000,
                0,
                List.of(),
                HttpConfig.DEFAULT);
    }

    public SelectServiceConfig withLimits(SelectServiceLimitsConfig limits) {
        return with(c -> c.limits = limits);
    }

    /** The same routes guarded by {@code security}'s token (the indexer's own settings under {@code serve}). */
    public SelectServiceConfig withSecurity(SecurityConfig security) {
        return with(c -> c.security = security);
    }

    /** The same service with session affinity, bindings idling out after {@code ttlSecs}; 0 for none. */
    public SelectServiceConfig withSessionAffinityTtlSecs(long ttlSecs) {
        return with(c -> c.sessionAffinityTtlSecs = ttlSecs);
    }

    /** Every field once, for the withers: each wither names only what it changes. */
    private static final class Copy {
        private String host;
        private int port;
        private long cacheTtlMillis;
        private int cacheMaxEntries;
        private long cacheMaxBytes;
        private long cleanupIntervalMillis;
        private int replicaSyncPort;
        private List<String> replicaSyncPeers;
        private HttpConfig http;
        private SelectServiceLimitsConfig limits;
        private SecurityConfig security;
        private long sessionAffinityTtlSecs;

        private Copy(SelectServiceConfig c) {
            host = c.host;
            port = c.port;
            cacheTtlMillis = c.cacheTtlMillis;
            cacheMaxEntries = c.cacheMaxEntries;
            cacheMaxBytes = c.cacheMaxBytes;
            cleanupIntervalMillis = c.cleanupIntervalMillis;
            replicaSyncPort = c.replicaSyncPort;
            replicaSyncPeers = c.replicaSyncPeers;
            http = c.http;
            limits = c.limits;
            security = c.security;
            sessionAffinityTtlSecs = c.sessionAffinityTtlSecs;
        }

        private SelectServiceConfig build() {
            return new SelectServiceConfig(
                    host,
                    port,
                    cacheTtlMillis,
                    cacheMaxEntries,
                    cacheMaxBytes,
                    cleanupIntervalMillis,
                    replicaSyncPort,
                    replicaSyncPeers,
                    http,
                    limits,
                    security,
                    sessionAffinityTtlSecs);
        }
    }

    /** These settings with {@code change} made to a copy of them. */
    private SelectServiceConfig with(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.build();
    }
}
