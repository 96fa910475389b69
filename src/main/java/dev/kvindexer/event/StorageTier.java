package dev.kvindexer.event;

import java.util.Locale;

/**
 * Where a KV block lives; the JSON names are Dynamo's {@code storage_tier} values
 * (docs/protocol/index.md#storage-tiers).
 */
public enum StorageTier {
    DEVICE("device"),
    HOST_PINNED("host_pinned"),
    DISK("disk"),
    EXTERNAL("external");

    private static final StorageTier[] VALUES = values();

    private final String jsonName;

    StorageTier(String jsonName) {
        this.jsonName = jsonName;
    }

    public String jsonName() {
        return jsonName;
    }

    public static StorageTier of(int ordinal) {
        return VALUES[ordinal];
    }

    /**
     * Maps an engine medium string to a tier: Dynamo's {@code from_kv_medium} table, matched
     * case-insensitively, plus this project's extension for NPU/HBM and SSD/3FS/DFS/NFS. Null or unknown
     * values mean device, as in the reference.
     */
    public static StorageTier fromMedium(String medium) {
        if (medium == null) {
            return DEVICE;
        }
        return switch (medium.toUpperCase(Locale.ROOT)) {
            case "CPU", "CPU_PINNED", "CPU_TIER1" -> HOST_PINNED;
            case "CPU_TIER2", "DISK", "NVME", "STORAGE", "SSD", "3FS", "DFS", "NFS" -> DISK;
            case "EXTERNAL", "NETWORK", "REMOTE", "SHARED" -> EXTERNAL;
            default -> DEVICE;
        };
    }

    /** Parses a {@code storage_tier} JSON value; null means device (the /dump parse default). */
    public static StorageTier fromJsonName(String name) {
        if (name == null) {
            return DEVICE;
        }
        for (StorageTier t : VALUES) {
            if (t.jsonName.equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown storage_tier " + name);
    }
}
