package dev.kvindexer.sim;

/**
 * Decides which batches skip the live send (they stay in the replay buffer). A pure function of (seed, seq), so a
 * test can tell which seqs were dropped without sharing state with the engine thread.
 */
public record DropSchedule(long seed, double rate) {
    public static final DropSchedule NONE = new DropSchedule(0, 0);

    public DropSchedule {
        if (rate < 0 || rate > 1 || Double.isNaN(rate)) {
            throw new IllegalArgumentException("drop rate must be in [0, 1]: " + rate);
        }
    }

    public boolean drops(long seq) {
        if (rate == 0) {
            return false;
        }
        // SplitMix64 finaliser: a well-mixed 64-bit value per (seed, seq); its top 53 bits make a uniform double.
        long z = seed + (seq + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z = z ^ (z >>> 31);
        return (z >>> 11) * 0x1.0p-53 < rate;
    }
}
