package dev.kvindexer.recovery;

/**
 * What startup recovery did.
 *
 * @param peer       the URL the state came from, or null when the node started empty
 * @param partitions partitions loaded
 * @param events     stored events applied (extra copies included)
 * @param exact      every loaded partition was an exact snapshot with stream watermarks (a kvindexer peer)
 * @param millis     time spent, from the first request to the last partition installed
 */
public record RecoveryReport(String peer, int partitions, long events, boolean exact, long millis) {
    public static final RecoveryReport NONE = new RecoveryReport(null, 0, 0, false, 0);
}
