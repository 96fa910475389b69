package dev.kvindexer.config;

/**
 * What becomes of a stream's blocks when batches of it are lost for good (no replay endpoint, or a replay that could
 * not bring them back): the stream is marked inexact either way (docs/protocol/recovery.md#inexact-streams).
 */
public enum InexactStreamPolicy {
    /** Keep them: some may since have been removed by the engine, most are still right. */
    KEEP,
    /** Drop them: the stream holds only what arrives after the loss, so it never names a block the engine lost. */
    CLEAR;

    /** {@code keep} or {@code clear}, in any case; anything else is a startup error. */
    public static InexactStreamPolicy parse(String text) {
        for (InexactStreamPolicy p : values()) {
            if (p.name().equalsIgnoreCase(text)) {
                return p;
            }
        }
        throw new IllegalArgumentException("--inexact-stream-policy must be keep or clear, got " + text);
    }
}
