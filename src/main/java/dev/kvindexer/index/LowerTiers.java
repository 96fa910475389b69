package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;

/**
 * Slot numbers of the non-device tiers, in the fixed extension order of
 * docs/protocol/index.md#lower-tier-extension-and-the-per-instance-breakdown.
 */
final class LowerTiers {
    static final int COUNT = 3;
    private static final StorageTier[] ORDER = {StorageTier.HOST_PINNED, StorageTier.DISK, StorageTier.EXTERNAL};

    private LowerTiers() {}

    static int slot(StorageTier tier) {
        switch (tier) {
            case HOST_PINNED:
                return 0;
            case DISK:
                return 1;
            case EXTERNAL:
                return 2;
            default:
                throw new IllegalArgumentException("not a lower tier: " + tier);
        }
    }

    static StorageTier tier(int slot) {
        return ORDER[slot];
    }
}
