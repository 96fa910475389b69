package dev.kvindexer.config;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Where a node keeps its index across restarts, and what it does with streams it holds inexactly
 * (docs/operations.md#data-directory).
 *
 * @param dataDir          the directory the node writes its snapshots to and loads the newest good one from at a
 *                         cold start; null keeps the index in memory only
 * @param snapshotInterval how often a snapshot is written (and once more on shutdown)
 * @param recoverFromDisk  load the data directory even when a peer could be recovered from
 * @param inexactStreams   what becomes of a stream's blocks when batches of it are lost for good
 */
public record DurabilityConfig(
        Path dataDir, Duration snapshotInterval, boolean recoverFromDisk, InexactStreamPolicy inexactStreams) {
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(60);
    public static final DurabilityConfig IN_MEMORY =
            new DurabilityConfig(null, DEFAULT_INTERVAL, false, InexactStreamPolicy.KEEP);

    public DurabilityConfig {
        if (snapshotInterval.isNegative() || snapshotInterval.isZero()) {
            throw new IllegalArgumentException(
                    "--snapshot-interval must be positive, got " + snapshotInterval.toSeconds());
        }
        if (recoverFromDisk && dataDir == null) {
            throw new IllegalArgumentException("--recover-from-disk needs --data-dir");
        }
        if (inexactStreams == null) {
            throw new IllegalArgumentException("--inexact-stream-policy must be keep or clear");
        }
    }

    /** Settings with a data directory written every {@code interval}. */
    public static DurabilityConfig inDirectory(Path dir, Duration interval) {
        return new DurabilityConfig(dir, interval, false, InexactStreamPolicy.KEEP);
    }

    public boolean persistent() {
        return dataDir != null;
    }
}
