package dev.kvindexer.event;

import java.util.List;

/**
 * One decoded engine batch, ready for its partition: engine hashes as longs, tokens already hashed with
 * the partition's block size.
 *
 * @param seq                  the batch's ZMQ sequence number (unsigned)
 * @param dpRank               the batch's own data-parallel rank, or {@link #NO_RANK} to use the registered one
 * @param events               index operations in wire order
 * @param malformedEvents      events skipped because they could not be decoded
 * @param blockSizeMismatches  BlockStored events skipped because their block_size differs from the partition's
 * @param filteredEvents       events ignored by the hybrid-model group filter
 */
public record EventBatch(
        long seq, int dpRank, List<KvEvent> events, int malformedEvents, int blockSizeMismatches, int filteredEvents) {
    public static final int NO_RANK = -1;
    /**
     * The largest data-parallel rank a batch may name. No deployment has more ranks than this, and each rank a batch
     * names becomes an owner in the index, so a larger one is a corrupt or hostile batch.
     */
    public static final int MAX_RANK = 65_535;

    public int effectiveRank(int registeredRank) {
        return dpRank == NO_RANK ? registeredRank : dpRank;
    }
}
