package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.support.FreePort;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The node-wide listener ceiling: derived from the descriptor limit, and a start beyond it refused. */
class ListenerCapacityTest {
    @Test
    void theCeilingLeavesAReserveOfTheDescriptorLimit() {
        assertEquals(17_500, ListenerCapacity.forDescriptorLimit(20_000), "an eighth kept");
        assertEquals(512, ListenerCapacity.forDescriptorLimit(1_024), "at least 512 kept");
        assertEquals(20_000, ListenerCapacity.forDescriptorLimit(24_096), "at most 4,096 kept");
        assertEquals(ListenerCapacity.MAX_DEFAULT, ListenerCapacity.forDescriptorLimit(1 << 20));
        assertEquals(1, ListenerCapacity.forDescriptorLimit(100));
        assertEquals(ListenerCapacity.MAX_DEFAULT, ListenerCapacity.forDescriptorLimit(-1));
        assertEquals(
                ListenerCapacity.forDescriptorLimit(ListenerCapacity.descriptorLimit()), ListenerCapacity.derived());
    }

    @Test
    void aStartBeyondTheCeilingIsRefusedUntilAListenerStops() throws Exception {
        Vertx vertx = Vertx.vertx();
        ZmqIngest ingest = new ZmqIngest(
                vertx,
                new ZmqIngest.Config(2, 100, ServeConfig.DEFAULT_MAX_EVENT_BYTES, ZmqIngest.Config.SUPERVISE_EVERY, 2),
                new EventCounters(),
                () -> true);
        try {
            PartitionRef partition = new PartitionHost(
                            vertx, new EventCounters(), new Watermarks(), ingest.replays(), ingest.inFlight())
                    .allocate(new PartitionKey("m", "t"), 16);
            // Nothing listens there: the listeners keep trying, which is all a start needs.
            String endpoint = "tcp://127.0.0.1:" + FreePort.any();
            Listener a = new Listener(1, 0, endpoint, null, partition, 0);
            Listener b = new Listener(2, 0, endpoint, null, partition, 0);
            Listener c = new Listener(3, 0, endpoint, null, partition, 0);
            await(ingest.start(a));
            await(ingest.start(b));
            assertEquals(2, ingest.listenerCount());
            assertEquals(2, ingest.listenerCapacity());

            ExecutionException refused = assertThrows(ExecutionException.class, () -> await(ingest.start(c)));
            Refusal limit = assertInstanceOf(Refusal.class, refused.getCause());
            assertEquals(Refusal.Kind.FULL, limit.kind());
            assertEquals("listener limit reached: 2 listeners (--max-listeners)", limit.getMessage());
            assertEquals(ListenerState.PENDING, c.state(), "a refused listener is never started");

            await(ingest.stop(a));
            await(ingest.start(c));
            assertEquals(2, ingest.listenerCount());
        } finally {
            ingest.close(Duration.ofSeconds(5));
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    @Test
    void aCeilingUnderOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ZmqIngest.Config(1, 1, 1, Duration.ofSeconds(1), 0));
    }

    private static void await(Future<Void> f) throws Exception {
        f.toCompletionStage().toCompletableFuture().get();
    }
}
