package dev.kvindexer.partition;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.BlockVisitor;
import java.util.Set;

/** Passes on a dump's blocks of some instances only, with the copies of those blocks. */
final class InstancesOnly implements BlockVisitor {
    private final Set<Long> workers;
    private final BlockVisitor sink;
    /** Whether the block a following {@link #copies} names was passed on. */
    private boolean lastPassed;

    InstancesOnly(Set<Long> workers, BlockVisitor sink) {
        this.workers = workers;
        this.sink = sink;
    }

    @Override
    public void stored(
            long workerId,
            int dpRank,
            StorageTier tier,
            boolean hasParent,
            long parentHash,
            long blockHash,
            long tokensHash) {
        lastPassed = workers.contains(workerId);
        if (lastPassed) {
            sink.stored(workerId, dpRank, tier, hasParent, parentHash, blockHash, tokensHash);
        }
    }

    @Override
    public void storedBySequence(
            long workerId, int dpRank, StorageTier tier, boolean hasParent, long parentHash, long sequenceHash) {
        lastPassed = workers.contains(workerId);
        if (lastPassed) {
            sink.storedBySequence(workerId, dpRank, tier, hasParent, parentHash, sequenceHash);
        }
    }

    @Override
    public void copies(int copies) {
        if (lastPassed) {
            sink.copies(copies);
        }
    }
}
