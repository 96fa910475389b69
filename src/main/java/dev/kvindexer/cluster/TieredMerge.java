package dev.kvindexer.cluster;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.TieredMatch;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Tier-by-tier matches of disjoint sets of owners (one part per node) merged into the match one index holding all of
 * them gives. Owners are independent: each part lists its owners as the whole index would, except in a lower tier the
 * part has no index for. The whole index lists there, with zero blocks, every owner already in its continuation:
 * those with a device match or listed in an earlier tier of their part.
 */
final class TieredMerge {
    private final List<TieredMatch> parts = new ArrayList<>();

    /** A part holding only owners no other part holds. */
    void add(TieredMatch part) {
        parts.add(part);
    }

    TieredMatch result() {
        List<Row> device = new ArrayList<>();
        Set<StorageTier> tiers = EnumSet.noneOf(StorageTier.class);
        for (TieredMatch p : parts) {
            rows(p.device(), device);
            p.lowerTiers().forEach(t -> tiers.add(t.tier()));
        }
        List<Map<StorageTier, TieredMatch.Owners>> partTiers = new ArrayList<>();
        for (TieredMatch p : parts) {
            Map<StorageTier, TieredMatch.Owners> byTier = new EnumMap<>(StorageTier.class);
            p.lowerTiers().forEach(t -> byTier.put(t.tier(), t.hits()));
            partTiers.add(byTier);
        }
        List<TieredMatch.Tier> lower = new ArrayList<>();
        for (StorageTier tier : tiers) { // EnumSet iterates in ordinal order, the walk order of the tiers
            List<Row> hits = new ArrayList<>();
            for (int i = 0; i < parts.size(); i++) {
                TieredMatch p = parts.get(i);
                TieredMatch.Owners own = partTiers.get(i).get(tier);
                if (own != null) {
                    rows(own, hits);
                    continue;
                }
                // No index for this tier in this part: its continuation so far, at zero.
                List<Row> continuing = new ArrayList<>();
                rows(p.device(), continuing);
                for (TieredMatch.Tier earlier : p.lowerTiers()) {
                    if (earlier.tier().ordinal() < tier.ordinal()) {
                        rows(earlier.hits(), continuing);
                    }
                }
                continuing.stream()
                        .map(r -> new Row(r.worker, r.rank, 0))
                        .distinct()
                        .forEach(hits::add);
            }
            lower.add(new TieredMatch.Tier(tier, columns(hits)));
        }
        return new TieredMatch(columns(device), lower);
    }

    private record Row(long worker, int rank, int blocks) {}

    private static void rows(TieredMatch.Owners o, List<Row> out) {
        for (int i = 0; i < o.size(); i++) {
            out.add(new Row(o.workers()[i], o.ranks()[i], o.blocks()[i]));
        }
    }

    /** Rows as columns sorted by (worker id unsigned, dp rank), as the index orders them. */
    private static TieredMatch.Owners columns(List<Row> rows) {
        rows.sort((a, b) -> {
            int c = Long.compareUnsigned(a.worker, b.worker);
            return c != 0 ? c : Integer.compare(a.rank, b.rank);
        });
        long[] workers = new long[rows.size()];
        int[] ranks = new int[rows.size()];
        int[] blocks = new int[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            workers[i] = rows.get(i).worker;
            ranks[i] = rows.get(i).rank;
            blocks[i] = rows.get(i).blocks;
        }
        return new TieredMatch.Owners(workers, ranks, blocks);
    }
}
