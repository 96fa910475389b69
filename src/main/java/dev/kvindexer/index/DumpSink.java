package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;

/** Receives a partition's content as single-block stored events, parents before children. */
@FunctionalInterface
public interface DumpSink {
    void stored(long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash,
                long blockHash, long tokensHash);
}
