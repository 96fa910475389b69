package dev.kvindexer.select;

/**
 * What a selection knows about one candidate rank (docs/api/selection.md#per-rank-inputs): its cached prefix of the prompt per tier, in
 * blocks, its active load, and the multiplier its preferred taints give (1 when none match or none are asked for).
 *
 * @param dev        device-tier prefix depth
 * @param host       host-pinned extension beyond the device prefix
 * @param disk       disk and external extension beyond that
 * @param prefill    {@code active_prefill_tokens}
 * @param decode     {@code active_decode_blocks}
 * @param requests   active reservations
 * @param newBlocks  the prompt's blocks not already active on the rank
 */
public record RankInputs(
        long workerId,
        int dpRank,
        int dev,
        int host,
        int disk,
        long prefill,
        long decode,
        int requests,
        int newBlocks,
        double taintMultiplier) {
    /** A rank with no cache hit and no load: every block of the prompt is new. */
    public static RankInputs idle(long workerId, int dpRank, int newBlocks) {
        return new RankInputs(workerId, dpRank, 0, 0, 0, 0, 0, 0, newBlocks, 1.0);
    }
}
