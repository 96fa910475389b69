package dev.kvindexer.event;

import java.util.Locale;

/** Where a KV block lives; the JSON names are Dynamo's {@code storage_tier} values (SPEC §1.5). */
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
     * case-insensitively, plus the SPEC's extension for NPU/HBM and SSD/3FS/DFS/NFS. Null or unknown
     * values mean device, as in the reference.
     */
    public static StorageTier fromMedium(String medium) {
        if (medium == null) {
            return DEVICE;
        }
        switch (medium.toUpperCase(Locale.ROOT)) {
            case "CPU": case "CPU_PINNED": case "CPU_TIER1":
                return HOST_PINNED;
            case "CPU_TIER2": case "DISK": case "NVME": case "STORAGE":
            case "SSD": case "3FS": case "DFS": case "NFS":
                return DISK;
            case "EXTERNAL": case "NETWORK": case "REMOTE": case "SHARED":
                return EXTERNAL;
            default:
                return DEVICE;
        }
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
