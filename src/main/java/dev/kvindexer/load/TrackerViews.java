package dev.kvindexer.load;

/**
 * What the slot tracker reports (docs/api/slot-tracker.md): plain records the HTTP adapter writes as they are, each
 * component a snake_case member in the order declared here.
 */
public final class TrackerViews {
    private TrackerViews() {}

    /** One registration: a worker's contiguous DP range in a tracker. */
    public record Worker(
            long workerId, String modelName, String routingGroup, int blockSize, long dpStart, long dpSize) {}

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
