package dev.kvindexer.index;

/** Result of applying one Stored event; the names are the {@code status} label values of docs/operations.md#metrics. */
public enum StoreOutcome {
    OK("ok"),
    PARENT_BLOCK_NOT_FOUND("parent_block_not_found"),
    INVALID_BLOCK_SEQUENCE("invalid_block_sequence"),
    /**
     * A shared store owner published a device-tier block: stores hold CPU and disk tiers only
     * (docs/protocol/events.md#mooncake-store-events).
     */
    STORE_DEVICE_TIER("store_device_tier"),
    /** A chain longer than a partition's device tree can ever hold, even with every other block evicted. */
    INDEX_FULL("index_full");

    private final String label;

    StoreOutcome(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
