package dev.kvindexer.select;

import java.util.HashMap;
import java.util.Map;

/**
 * The index's answer for one prompt, per rank, in blocks (docs/api/selection.md#per-rank-inputs): the device prefix, the host-pinned extension
 * beyond it, and the disk and external extension beyond that. Ranks the index did not match have none.
 */
public final class RankOverlaps {
    /**
     * One rank's hit; {@code predicted} is the prefix the rank's recent bookings predict
     * ({@link PredictedBlocks}), already counted in {@code dev} when it is the longer.
     */
    public record Hit(long workerId, int dpRank, int dev, int host, int disk, int predicted) {}

    public static final RankOverlaps NONE = new RankOverlaps();

    private final Map<Long, Map<Integer, int[]>> byWorker = new HashMap<>();

    /** Adds blocks to a rank's tier: 0 device, 1 host pinned, 2 disk and external. */
    public RankOverlaps add(long workerId, int dpRank, int tier, int blocks) {
        byWorker.computeIfAbsent(workerId, w -> new HashMap<>()).computeIfAbsent(dpRank, r -> new int[4])[tier] +=
                blocks;
        return this;
    }

    /**
     * Merges a rank's predicted prefix: its device figure becomes the longer of the two, as Dynamo merges its side
     * index by per-rank maximum; the lower tiers stay the engine's, extensions beyond what the engine reported.
     */
    public RankOverlaps predict(long workerId, int dpRank, int blocks) {
        int[] t = byWorker.computeIfAbsent(workerId, w -> new HashMap<>()).computeIfAbsent(dpRank, r -> new int[4]);
        t[3] = Math.max(t[3], blocks);
        t[0] = Math.max(t[0], blocks);
        return this;
    }

    public Hit of(long workerId, int dpRank) {
        Map<Integer, int[]> ranks = byWorker.get(workerId);
        int[] t = ranks == null ? null : ranks.get(dpRank);
        return t == null ? new Hit(workerId, dpRank, 0, 0, 0, 0) : new Hit(workerId, dpRank, t[0], t[1], t[2], t[3]);
    }

    /** Every matched rank, for routes that list ranks the catalog does not know. */
    public java.util.List<Hit> hits() {
        java.util.List<Hit> out = new java.util.ArrayList<>();
        byWorker.forEach((w, ranks) -> ranks.forEach((r, t) -> out.add(new Hit(w, r, t[0], t[1], t[2], t[3]))));
        return out;
    }
}
