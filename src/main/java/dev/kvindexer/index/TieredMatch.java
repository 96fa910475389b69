package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import java.util.List;

/**
 * A prompt's match rendered tier by tier (Dynamo's {@code /query_tiered_by_hash}, docs/api/dynamo.md#post-query_tiered_by_hash), in blocks: the device
 * depth of every owner with at least one device block, and for each lower-tier index the partition has, the blocks
 * each owner in that tier's continuation matched there beyond its walk so far, zeros included. Columns are parallel
 * arrays sorted by (worker id unsigned, dp rank); tiers come in walk order.
 */
public record TieredMatch(Owners device, List<Tier> lowerTiers) {
    /** Parallel columns: {@code workers[i]}, {@code ranks[i]} matched {@code blocks[i]}. */
    public record Owners(long[] workers, int[] ranks, int[] blocks) {
        public int size() {
            return workers.length;
        }
    }

    /** One lower-tier index's hits. */
    public record Tier(StorageTier tier, Owners hits) {}
}
