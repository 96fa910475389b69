package dev.kvindexer.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.support.FreePort;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A hand-over pass classifies an instance as "take" and reaches it only later (each earlier take-over waits for its
 * settle and snapshot); meanwhile the placement moved (instances still registering) and this node no longer holds the
 * shard, so the new listener generation starts remote. The take-over must then install nothing: a snapshot installed
 * with no stream open stays in the partition as the blocks of an instance this node does not serve, and a later
 * take-over of the same instance adds its own snapshot on top (the index counts copies), so blocks the engine removed
 * in between are held for good.
 */
class TakeOverPlacementMovedTest {
    private static final PartitionKey KEY = new PartitionKey("m", "default");
    private static final long WORKER = 7;

    @Test
    void aTakeOverWhoseShardMovedAwayMeanwhileInstallsNothing() throws Exception {
        Vertx vertx = Vertx.vertx();
        EventCounters counters = new EventCounters();
        ZmqIngest ingest = new ZmqIngest(
                vertx,
                new ZmqIngest.Config(1, 100, ServeConfig.DEFAULT_MAX_EVENT_BYTES, ZmqIngest.Config.SUPERVISE_EVERY, 8),
                counters,
                () -> true);
        try {
            PartitionHost host =
                    new PartitionHost(vertx, counters, new Watermarks(), ingest.replays(), ingest.inFlight());
            Registry registry = new Registry(host);
            AtomicBoolean holds = new AtomicBoolean(false);
            LocalRegistrar registrar = new LocalRegistrar(registry, host, ingest, (k, w, store) -> holds.get());
            String endpoint = "tcp://127.0.0.1:" + FreePort.any();
            await(registrar.register(new RegisterRequest(WORKER, 0, endpoint, null, KEY, 16)));
            assertEquals(ListenerState.REMOTE, registry.listener(WORKER, 0).state());
            PartitionRef partition = registry.partition(KEY).orElseThrow();

            // The pass saw "held here" and took the instance; by the time it gets to it the placement moved away.
            List<Listener> remote = new ArrayList<>(registry.listeners());
            holds.set(false);
            // A peer's copy at seq 2: blocks 10 -> 11 -> 12.
            awaitQuietly(registrar.takeOver(remote, hosted -> hosted.recover(snapshot(2, 10, 11, 12))));
            assertEquals(ListenerState.REMOTE, registry.listener(WORKER, 0).state());
            assertEquals(
                    0,
                    deviceBlocks(partition),
                    "an instance whose take-over did not start holds no blocks here (it is remote)");

            // The placement comes back: taken over again from a copy at seq 4, where the engine removed 12 and
            // stored 13 (and 11 -> 13).
            holds.set(true);
            remote = new ArrayList<>(registry.listeners());
            assertEquals(ListenerState.REMOTE, remote.get(0).state());
            await(registrar.takeOver(remote, hosted -> hosted.recover(snapshot(4, 10, 11, 13))));
            assertTrue(registry.servesHere(WORKER));
            assertEquals(3, deviceBlocks(partition), "exactly the second copy's blocks 10, 11, 13 (not 12 as well)");
        } finally {
            ingest.close(Duration.ofSeconds(5));
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    /** An exact snapshot of the chain {@code hashes} (each the parent of the next) with watermark {@code seq}. */
    private static PeerSnapshot snapshot(long seq, long... hashes) {
        List<PeerSnapshot.Event> events = new ArrayList<>();
        Long parent = null;
        for (long h : hashes) {
            events.add(new PeerSnapshot.Event(
                    WORKER,
                    0,
                    new KvEvent.Stored(
                            StorageTier.DEVICE,
                            parent != null,
                            parent == null ? 0 : parent,
                            new long[] {h},
                            new long[] {h + 1000})));
            parent = h;
        }
        return new PeerSnapshot(events, List.of(new PeerSnapshot.StreamWatermark(WORKER, 0, seq)), true);
    }

    /** (block, holder) pairs of the device tier: the partition holds no other instance. */
    private static long deviceBlocks(PartitionRef partition) throws Exception {
        return await(partition.stats()).heldPerTier()[StorageTier.DEVICE.ordinal()];
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private static void awaitQuietly(Future<?> f) throws Exception {
        try {
            await(f);
        } catch (java.util.concurrent.ExecutionException expected) {
            // A take-over that cannot proceed may fail; the next pass decides again.
        }
    }
}
