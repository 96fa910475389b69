package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.metrics.EventCounters;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The actor's mailbox: commands run in the order sent, those sent before the actor starts wait for it, an answer
 * reaches the asker on the asker's own context, and what an actor that stopped never took fails as gone and gives its
 * room back.
 */
class PartitionMailboxTest {
    private static final long WORKER = 7;
    private static final int CHAIN = 64;

    private final Vertx vertx = Vertx.vertx();
    private final InFlightBatches inFlight = new InFlightBatches(1_000);
    private final PartitionHost host =
            new PartitionHost(vertx, new EventCounters(), new Watermarks(), replay -> {}, inFlight);

    @AfterEach
    void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void commandsSentBeforeTheActorStartsRunInTheOrderSentOnceItDoes() throws Exception {
        PartitionRef partition = host.allocate(new PartitionKey("m", "default"), 16);
        long[] local = new long[CHAIN];
        List<Future<StandardEventsApplied>> applied = new ArrayList<>();
        // Each block's parent is the one before: run out of order, a block would find no parent and be refused.
        for (int i = 0; i < CHAIN; i++) {
            local[i] = 1_000 + i;
            KvEvent stored = new KvEvent.Stored(
                    StorageTier.DEVICE, i > 0, i > 0 ? 9_000 + i - 1 : 0, new long[] {9_000 + i}, new long[] {local[i]
                    });
            applied.add(partition.applyStandard(List.of(new StandardEvent("s", i + 1, WORKER, 0, stored))));
        }
        assertFalse(applied.get(0).isComplete(), "no actor runs yet");

        await(host.start(partition));
        for (Future<StandardEventsApplied> f : applied) {
            assertEquals(1, await(f).applied());
        }
        assertEquals(CHAIN, await(partition.query(local)).owners().gpuBlocks(0));
    }

    @Test
    void anAnswerComesBackOnTheAskersContext() throws Exception {
        PartitionRef partition = host.allocate(new PartitionKey("m", "default"), 16);
        await(host.start(partition));
        Context asker = vertx.getOrCreateContext();
        CompletableFuture<Context> answeredOn = new CompletableFuture<>();
        asker.runOnContext(v -> partition.stats().onComplete(ar -> answeredOn.complete(Vertx.currentContext())));
        Context seen = answeredOn.get(30, TimeUnit.SECONDS);
        assertSame(asker, seen, "what the asker composes on an answer runs where it asked, not on the actor");
    }

    @Test
    void whatAStoppedActorNeverTookFailsAsGoneAndGivesItsRoomBack() throws Exception {
        LocalPartition partition = (LocalPartition) host.allocate(new PartitionKey("m", "default"), 16);
        // Never started: the letters wait in the mailbox when the actor stops, as they would behind a slow undeploy.
        partition.applyLive(WORKER, 0, 1, new EventBatch(1, EventBatch.NO_RANK, List.of(), 0, 0, 0), 100);
        Future<PartitionStats> asked = partition.stats();
        assertEquals(1, inFlight.current());

        partition.stopped();

        assertEquals(0, inFlight.current(), "the batch left in the mailbox is no longer in flight");
        assertGone(asked);
        assertGone(partition.stats());
        partition.applyLive(WORKER, 0, 1, new EventBatch(2, EventBatch.NO_RANK, List.of(), 0, 0, 0), 100);
        assertEquals(0, inFlight.current(), "a batch sent after the stop is given back at once");
    }

    private static void assertGone(Future<?> f) throws Exception {
        try {
            f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            throw new AssertionError("answered after the actor stopped");
        } catch (ExecutionException e) {
            assertInstanceOf(PartitionGoneException.class, e.getCause());
        }
        assertTrue(f.failed());
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
