package dev.kvindexer.load;

/** What the slot tracker reports: plain records the HTTP adapter renders (docs/api/slot-tracker.md). */
public final class TrackerViews {
    private TrackerViews() {}

    /** One registration: a worker's contiguous DP range in a tracker. */
    public record Worker(
            String modelName, String routingGroup, long workerId, int blockSize, long dpStart, long dpSize) {}

    /** The current load of one registered (worker, dp_rank). */
    public record RankLoad(
            String modelName,
            String routingGroup,
            long workerId,
            long dpRank,
            long activePrefillTokens,
            int activeDecodeBlocks) {}

    /** The load of one registered (worker, dp_rank) if a request were added to it; its active requests as they are. */
    public record PotentialLoad(
            long workerId, long dpRank, long potentialPrefillTokens, int potentialDecodeBlocks, int activeRequests) {}
}
