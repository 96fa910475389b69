package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.metrics.EventCounters;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What a partition's stats say each engine rank holds and sent, and when it last did, on a clock the test moves. */
class EngineActivityTest {
    private final AtomicLong clock = new AtomicLong(1_000);
    private final Partition partition = new Partition(
            new PartitionKey("m", "default"),
            4,
            null,
            new EventCounters(),
            new Watermarks(),
            r -> {},
            InexactStreamPolicy.KEEP,
            repair -> {},
            clock::get);

    private static KvEvent stored(StorageTier tier, long... hashes) {
        return new KvEvent.Stored(tier, false, 0, hashes, hashes.clone());
    }

    private void apply(long eventId, long worker, int rank, KvEvent event) {
        partition.applyStandard(List.of(new StandardEvent("s" + worker + "/" + rank, eventId, worker, rank, event)));
    }

    private PartitionStats.Engine engine(long worker, int rank) {
        return partition.stats().engines().stream()
                .filter(e -> e.workerId() == worker && e.dpRank() == rank)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no figures for " + worker + "/" + rank));
    }

    @Test
    void countsBlocksStoredAndRemovedPerRankWithTheTimeOfTheLastEvent() {
        partition.openStream(new StreamSpec(7, 0, 1, null));
        PartitionStats.Engine registered = engine(7, 0);
        assertEquals(0, registered.events());
        assertEquals(1_000, registered.lastEventMillis(), "silent since registration");

        clock.set(5_000);
        apply(1, 7, 0, stored(StorageTier.DEVICE, 11, 12, 13));
        apply(1, 7, 1, stored(StorageTier.HOST_PINNED, 21));
        clock.set(9_000);
        apply(2, 7, 0, new KvEvent.Removed(StorageTier.DEVICE, new long[] {12, 404}));

        PartitionStats.Engine rank0 = engine(7, 0);
        assertEquals(3, rank0.storedBlocks());
        assertEquals(1, rank0.removedBlocks(), "a hash it never held removes nothing");
        assertEquals(2, rank0.events());
        assertEquals(9_000, rank0.lastEventMillis());
        assertArrayEquals(new long[] {2, 0, 0, 0}, rank0.heldPerTier());
        PartitionStats.Engine rank1 = engine(7, 1);
        assertEquals(5_000, rank1.lastEventMillis());
        assertArrayEquals(new long[] {0, 1, 0, 0}, rank1.heldPerTier());
        assertEquals(
                List.of(0, 1),
                partition.stats().engines().stream()
                        .map(PartitionStats.Engine::dpRank)
                        .toList());

        partition.removeStreams(7, 1, false);
        assertEquals(
                List.of(0),
                partition.stats().engines().stream()
                        .map(PartitionStats.Engine::dpRank)
                        .toList(),
                "an unregistered rank is no longer listed");
        partition.removeStreams(7, -1, true);
        assertEquals(List.of(), partition.stats().engines());
    }
}
