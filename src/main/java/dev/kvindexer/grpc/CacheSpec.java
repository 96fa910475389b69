package dev.kvindexer.grpc;

import dev.kvindexer.grpc.v1.WorkerCacheSpec;

/**
 * A worker's cache spec (which KV components it keeps, the sliding window, each component's servable tiers) with the
 * rules a prefix needs from it. A spec sent but unusable (no components, a version past 1, a sliding window of 0)
 * serves no prefix at all: the worker's cache cannot be read safely.
 */
record CacheSpec(int version, int components, int swaWindowTokens, int fullTiers, int swaTiers, int mambaTiers) {
    static final int SUPPORTED_VERSION = 1;

    static CacheSpec of(WorkerCacheSpec s) {
        return new CacheSpec(
                s.getVersion(),
                s.getComponents(),
                s.getSwaWindowTokens(),
                s.getFullTierMask(),
                s.getSwaTierMask(),
                s.getMambaTierMask());
    }

    WorkerCacheSpec toProto() {
        return WorkerCacheSpec.newBuilder()
                .setVersion(version)
                .setComponents(components)
                .setSwaWindowTokens(swaWindowTokens)
                .setFullTierMask(fullTiers)
                .setSwaTierMask(swaTiers)
                .setMambaTierMask(mambaTiers)
                .build();
    }

    boolean usable() {
        return components != 0
                && Integer.compareUnsigned(version, SUPPORTED_VERSION) <= 0
                && !(has(ExternalKvIndex.SWA) && swaWindowTokens == 0);
    }

    boolean has(int component) {
        return (components & component) != 0;
    }

    /** The tiers (as bits 1 << tier) a component may be served from: the spec's, within HBM and DRAM. */
    int servableTiers(int component) {
        int tiers = switch (component) {
            case ExternalKvIndex.FULL -> fullTiers;
            case ExternalKvIndex.SWA -> swaTiers;
            default -> mambaTiers;
        };
        return tiers & ExternalKvIndex.SERVABLE_TIERS;
    }
}
