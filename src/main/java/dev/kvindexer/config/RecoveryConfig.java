package dev.kvindexer.config;

import java.time.Duration;

/**
 * Bounds on what startup recovery takes from one peer: a dump or snapshot larger than {@code maxBytes}, or still
 * arriving {@code timeout} after it was asked for, is abandoned with an error naming the limit, and the next peer
 * is tried.
 */
public record RecoveryConfig(long maxBytes, Duration timeout) {
    public static final RecoveryConfig DEFAULT = new RecoveryConfig(16L * 1024 * 1024 * 1024, Duration.ofMinutes(10));

    public RecoveryConfig {
        if (maxBytes < 1024) {
            throw new IllegalArgumentException("--recovery-max-bytes must be at least 1024, got " + maxBytes);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("--recovery-timeout must be positive, got " + timeout.toSeconds());
        }
    }
}
