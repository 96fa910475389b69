package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;

/** A (worker, dp_rank) of one partition, interned to a dense id so holder sets can be bitsets. */
final class Owner {
    final long workerId;
    final int dpRank;
    final int id;
    /**
     * A Mooncake Store (shared store owner, docs/protocol/events.md#mooncake-store-events): its lower-tier blocks
     * extend every owner's walk.
     */
    boolean store;
    /** Device hashes the tree's shared engine-hash table does not lead to for this owner, and its device counts. */
    final DeviceBlocks device = new DeviceBlocks();

    /** {@link #bytes()} when its table last counted it, and whether it may have changed since. */
    long countedBytes;

    boolean touched;

    @SuppressWarnings("unchecked")
    private final LowerTierBlocks<LowerEdge>[] lower = new LowerTierBlocks[LowerTiers.COUNT];

    Owner(long workerId, int dpRank, int id) {
        this.workerId = workerId;
        this.dpRank = dpRank;
        this.id = id;
    }

    LowerTierBlocks<LowerEdge> lower(int slot) {
        LowerTierBlocks<LowerEdge> h = lower[slot];
        if (h == null) {
            lower[slot] = h = new LowerTierBlocks<>();
        }
        return h;
    }

    /** Null when the owner never stored in that lower tier. */
    LowerTierBlocks<LowerEdge> lowerIfAny(int slot) {
        return lower[slot];
    }

    int held(StorageTier tier) {
        if (tier == StorageTier.DEVICE) {
            return device.blocks;
        }
        LowerTierBlocks<LowerEdge> h = lower[LowerTiers.slot(tier)];
        return h == null ? 0 : h.size();
    }

    /** Heap held by this owner and its own block maps. */
    long bytes() {
        long b = 64 + device.bytes();
        for (LowerTierBlocks<LowerEdge> h : lower) {
            b += h == null ? 0 : h.bytes();
        }
        return b;
    }

    @Override
    public String toString() {
        return Long.toUnsignedString(workerId) + ":" + dpRank;
    }
}
