package dev.kvindexer.query;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.metrics.QueryQuality;
import dev.kvindexer.partition.TieredQueryResult;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a query's answer becomes its routing-quality observation: best reach and distinct instances. */
class QueryObservationTest {
    private static final PartitionKey KEY = new PartitionKey("m", "default");
    private final QueryQuality quality = new QueryQuality();

    private QueryQuality.Totals totals() {
        return quality.totals().get(0);
    }

    @Test
    void theBestReachInAnyTierAndEveryInstanceWithABlockCount() {
        // Worker 5 holds 2 blocks on rank 0 and 3 (cumulative, CPU included) on rank 1; worker -1 (u64 max) 1 block.
        IndexQueries.observe(
                quality,
                KEY,
                64,
                OwnerMatches.of(List.of(
                        new OwnerMatch(5, 0, 2, 2, 2),
                        new OwnerMatch(-1, 0, 1, 1, 1),
                        new OwnerMatch(5, 1, 1, 3, 3),
                        new OwnerMatch(9, 0, 0, 0, 0))),
                16);
        assertEquals(1, totals().queries());
        assertEquals(48.0 / 64, totals().ratioSum(), 1e-12);
        assertEquals(2, totals().instancesSum(), "worker 9 holds nothing, worker 5 counts once");
    }

    @Test
    void aTieredAnswerSumsEachOwnersDeviceDepthAndLowerTierHits() {
        TieredMatch.Owners device =
                new TieredMatch.Owners(new long[] {3, 7, 7}, new int[] {0, 0, 1}, new int[] {1, 2, 0});
        TieredMatch.Owners host =
                new TieredMatch.Owners(new long[] {3, 7, -2L}, new int[] {0, 1, 0}, new int[] {0, 1, 2});
        TieredMatch.Owners disk = new TieredMatch.Owners(new long[] {3}, new int[] {0}, new int[] {2});
        TieredMatch match = new TieredMatch(
                device,
                List.of(
                        new TieredMatch.Tier(StorageTier.HOST_PINNED, host),
                        new TieredMatch.Tier(StorageTier.DISK, disk)));
        IndexQueries.observe(quality, KEY, 64, new TieredQueryResult(16, match));
        // Owner (3,0) reaches 1 + 0 + 2 = 3 blocks, the best; workers 3, 7 and 2^64-2 each hold something.
        assertEquals(48.0 / 64, totals().ratioSum(), 1e-12);
        assertEquals(3, totals().instancesSum());
        assertEquals(0, totals().zeroMatch());

        IndexQueries.observe(
                quality,
                KEY,
                64,
                new TieredQueryResult(
                        16, new TieredMatch(new TieredMatch.Owners(new long[0], new int[0], new int[0]), List.of())));
        assertEquals(1, totals().zeroMatch(), "an empty answer is a miss");
        IndexQueries.observe(quality, KEY, 15, new TieredQueryResult(16, match));
        assertEquals(2, totals().queries(), "a query shorter than a block is not counted");
    }

    @Test
    void aRemovedPartitionStopsBeingExported() {
        PartitionKey other = new PartitionKey("m", "other");
        IndexQueries.observe(quality, KEY, 16, OwnerMatches.of(List.of(new OwnerMatch(1, 0, 1, 1, 1))), 16);
        IndexQueries.observe(quality, other, 16, OwnerMatches.of(List.of()), 16);
        assertEquals(2, quality.totals().size());
        quality.retain(java.util.Set.of(other));
        assertEquals(
                List.of("other"),
                quality.totals().stream().map(QueryQuality.Totals::routingGroup).toList());
    }
}
