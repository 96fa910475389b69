package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import java.util.List;

/**
 * The KV block index of one (model, tenant) partition (SPEC §6): a device-tier prefix tree plus
 * lower-tier edge indexes. Single-threaded by contract: only its partition actor touches it.
 */
public final class PartitionIndex {

    public PartitionIndex(int blockSize) {
        throw new UnsupportedOperationException("TODO");
    }

    public int blockSize() {
        throw new UnsupportedOperationException("TODO");
    }

    public StoreOutcome store(long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash,
                              long[] blockHashes, long[] tokensHashes) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Removes one copy of each hash; returns how many hashes the owner did not hold in that tier. */
    public int remove(long workerId, int dpRank, StorageTier tier, long[] blockHashes) {
        throw new UnsupportedOperationException("TODO");
    }

    /** AllBlocksCleared from (worker, dp_rank): drops that owner from every tier. */
    public void clear(long workerId, int dpRank) {
        throw new UnsupportedOperationException("TODO");
    }

    public void removeWorker(long workerId) {
        throw new UnsupportedOperationException("TODO");
    }

    public void removeWorkerDpRank(long workerId, int dpRank) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Device match plus lower-tier extension for a prompt's local hashes. */
    public List<OwnerMatch> match(long[] localHashes) {
        throw new UnsupportedOperationException("TODO");
    }

    public void dump(DumpSink sink) {
        throw new UnsupportedOperationException("TODO");
    }
}
