package dev.kvindexer.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.support.FreePort;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** A registration beyond the node's listener ceiling is refused whole: a 429, and nothing of it left behind. */
class ListenerLimitTest {
    private static final PartitionKey KEY = new PartitionKey("m", "default");

    @Test
    void aRegistrationBeyondTheCeilingIsRefusedAndRolledBack() throws Exception {
        Vertx vertx = Vertx.vertx();
        EventCounters counters = new EventCounters();
        ZmqIngest ingest = new ZmqIngest(
                vertx,
                new ZmqIngest.Config(1, 100, ServeConfig.DEFAULT_MAX_EVENT_BYTES, ZmqIngest.Config.SUPERVISE_EVERY, 2),
                counters,
                () -> true);
        try {
            PartitionHost host =
                    new PartitionHost(vertx, counters, new Watermarks(), ingest.replays(), ingest.inFlight());
            Registry registry = new Registry(host);
            LocalRegistrar registrar = new LocalRegistrar(registry, host, ingest);
            String endpoint = "tcp://127.0.0.1:" + FreePort.any();
            register(registrar, 1, endpoint);
            register(registrar, 2, endpoint);

            ExecutionException e = assertThrows(ExecutionException.class, () -> register(registrar, 3, endpoint));
            Refusal refused = assertInstanceOf(Refusal.class, e.getCause());
            assertEquals(Refusal.Kind.FULL, refused.kind());
            assertEquals("listener limit reached: 2 listeners (--max-listeners)", refused.getMessage());
            assertNull(registry.listener(3, 0), "the refused registration is rolled back");
            assertEquals(2, registry.listeners().size());
            assertEquals(2, ingest.listenerCount());
        } finally {
            ingest.close(Duration.ofSeconds(5));
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private static void register(LocalRegistrar registrar, long id, String endpoint) throws Exception {
        registrar
                .register(new RegisterRequest(id, 0, endpoint, null, KEY, 16))
                .toCompletionStage()
                .toCompletableFuture()
                .get();
    }
}
