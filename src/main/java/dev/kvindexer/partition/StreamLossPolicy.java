package dev.kvindexer.partition;

/**
 * What becomes of a stream's blocks when batches of it are lost for good (no replay endpoint, or a replay that could
 * not bring them back): the stream is marked inexact either way (docs/protocol/recovery.md#inexact-streams).
 */
public enum StreamLossPolicy {
    /** Keep them: some may since have been removed by the engine, most are still right. */
    KEEP,
    /** Drop them: the stream holds only what arrives after the loss, so it never names a block the engine lost. */
    CLEAR
}
