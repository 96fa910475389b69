package dev.kvindexer.config;

import java.time.Duration;

/**
 * How long an HTTP client may hold a connection without finishing its work, so slow or stalled clients cannot pile
 * up connections. Both services (indexer and slot tracker) take the same limits.
 *
 * @param idleTimeout    a connection that has delivered no complete request head this long after it opened or after its
 *                       last answer is closed, whether it sends nothing or trickles bytes
 * @param requestTimeout a request whose body has not all arrived this long after its headers is answered 408 and its
 *                       connection closed
 */
public record HttpConfig(Duration idleTimeout, Duration requestTimeout) {
    public static final HttpConfig DEFAULT = new HttpConfig(Duration.ofSeconds(60), Duration.ofSeconds(30));

    public HttpConfig {
        if (idleTimeout == null || idleTimeout.isNegative() || idleTimeout.isZero()) {
            throw new IllegalArgumentException("--http-idle-timeout must be positive");
        }
        if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("--http-request-timeout must be positive");
        }
    }

    /** From the command line's whole seconds. */
    public static HttpConfig ofSeconds(long idleSeconds, long requestSeconds) {
        return new HttpConfig(Duration.ofSeconds(idleSeconds), Duration.ofSeconds(requestSeconds));
    }
}
