package dev.kvindexer.index;

/** A (worker, dp_rank) pair as seen from outside the index (holders of a block, for inspection and tests). */
public record OwnerKey(long workerId, int dpRank) {
    @Override
    public String toString() {
        return Long.toUnsignedString(workerId) + ":" + dpRank;
    }
}
