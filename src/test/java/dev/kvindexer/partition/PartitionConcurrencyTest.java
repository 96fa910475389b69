package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.support.PrefixReaders;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Queries read a partition on their callers' threads while its actor applies changes: every answer is a state the
 * changes went through (whole batches, a prefix that only grows while batches only store, then only shrinks), the
 * changes are never held back by steady queries, and a query of an idle partition is answered without its actor.
 */
class PartitionConcurrencyTest {
    private static final int BATCH = 8;
    private static final int BLOCKS = 256;
    private static final long WORKER = 7;

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void queriesOnManyThreadsSeeOnlyWholeBatches() throws Exception {
        PartitionHost host = new PartitionHost(
                vertx, new EventCounters(), new Watermarks(), replay -> {}, new InFlightBatches(1_000));
        PartitionRef partition = host.allocate(new PartitionKey("m", "default"), 16);
        await(host.start(partition));
        long[] local = new long[BLOCKS];
        long[] engine = new long[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            local[i] = 1_000 + i;
            engine[i] = 9_000 + i;
        }

        PrefixReaders readers =
                new PrefixReaders(4, () -> gpuOf(await(partition.query(local)).owners()), gpu -> gpu % BATCH == 0);
        long eventId = 1;
        for (int from = 0; from < BLOCKS; from += BATCH) {
            KvEvent stored = new KvEvent.Stored(
                    StorageTier.DEVICE,
                    from > 0,
                    from > 0 ? engine[from - 1] : 0,
                    Arrays.copyOfRange(engine, from, from + BATCH),
                    Arrays.copyOfRange(local, from, from + BATCH));
            assertEquals(1, apply(partition, eventId++, stored));
        }
        Future<QueryResult> idle = partition.query(local);
        assertTrue(idle.isComplete(), "an idle partition answers on the caller's thread, without its actor");
        assertEquals(BLOCKS, gpuOf(idle.result().owners()));
        Future<long[]> chain = partition.engineHashes(WORKER, 0, local, BLOCKS);
        assertTrue(chain.isComplete(), "an engine's chain (a selection's hint) is read the same way");
        assertTrue(Arrays.equals(engine, chain.result()));
        readers.shrinking();
        PrefixReaders chains = new PrefixReaders(
                2, () -> await(partition.engineHashes(WORKER, 0, local, BLOCKS)).length, n -> n % BATCH == 0);
        chains.shrinking();
        for (int to = BLOCKS; to > 0; to -= BATCH) {
            KvEvent removed = new KvEvent.Removed(StorageTier.DEVICE, Arrays.copyOfRange(engine, to - BATCH, to));
            assertEquals(1, apply(partition, eventId++, removed));
        }
        readers.stop();
        chains.stop();
        assertTrue(await(partition.query(local)).owners().isEmpty());
        assertEquals(0, await(partition.engineHashes(WORKER, 0, local, BLOCKS)).length);
    }

    private static int apply(PartitionRef partition, long eventId, KvEvent event) throws Exception {
        return await(partition.applyStandard(List.of(new StandardEvent("s", eventId, WORKER, 0, event))))
                .applied();
    }

    private static int gpuOf(OwnerMatches m) {
        for (int i = 0; i < m.size(); i++) {
            if (m.workerId(i) == WORKER && m.dpRank(i) == 0) {
                return m.gpuBlocks(i);
            }
        }
        return 0;
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
