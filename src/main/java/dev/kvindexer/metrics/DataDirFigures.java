package dev.kvindexer.metrics;

/**
 * A node's data directory as /metrics and /overview show it.
 *
 * @param dir                  the directory
 * @param writes               snapshots written
 * @param failedWrites         snapshots that could not be written (full or read-only disk, ...)
 * @param lastWriteEpochMillis when the last snapshot was written, 0 before the first
 * @param lastWriteBytes       its size
 * @param lastWriteMillis      how long writing it took
 * @param lastError            why the last write failed, or null when it succeeded
 * @param rejectedFiles        snapshot files moved aside at startup (truncated, corrupted, of another version, ...)
 */
public record DataDirFigures(
        String dir,
        long writes,
        long failedWrites,
        long lastWriteEpochMillis,
        long lastWriteBytes,
        long lastWriteMillis,
        String lastError,
        long rejectedFiles) {}
