package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;

/** Receives a partition's content as single-block stored events, parents before children. */
@FunctionalInterface
public interface BlockVisitor {
    void stored(
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean hasParent,
            long parentHash,
            long blockHash,
            long tokensHash);

    /**
     * The owner holds the block of the event just reported {@code copies} (at least 2) times: it was stored that
     * often and needs as many removes (docs/protocol/events.md#same-hash-stored-twice). Exact recovery restores the
     * count; a Dynamo dump has no place
     * for it.
     */
    default void copies(int copies) {}

    /**
     * A block stored without tokens (docs/protocol/events.md#standardized-events-into-index-operations), known by its
     * sequence hash alone, which is also its engine hash;
     * {@code parentHash} is its parent's sequence hash. Reported after every block placed by tokens.
     */
    default void storedBySequence(
            long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash, long sequenceHash) {}
}
