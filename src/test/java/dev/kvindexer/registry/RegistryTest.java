package dev.kvindexer.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.InFlightBatches;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.Watermarks;
import io.vertx.core.Vertx;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class RegistryTest {
    private static final PartitionKey LLAMA = new PartitionKey("llama", "default");
    private static final PartitionKey MISTRAL = new PartitionKey("mistral", "acme");

    /** The registry only allocates partition handles: nothing is deployed or sent. */
    private static final Vertx VERTX = Vertx.vertx();

    private final Registry registry = new Registry(
            new PartitionHost(VERTX, new EventCounters(), new Watermarks(), r -> {}, new InFlightBatches(1)));

    @AfterAll
    static void closeVertx() throws Exception {
        VERTX.close().toCompletionStage().toCompletableFuture().get();
    }

    private Registry.Registration register(long id, int dp, PartitionKey key, int bs) {
        return registry.register(new RegisterRequest(id, dp, "tcp://127.0.0.1:5557", null, key, bs));
    }

    @Test
    void firstRegistrationCreatesThePartitionAndFixesItsBlockSize() throws Exception {
        assertTrue(register(1, 0, LLAMA, 16).createdPartition());
        assertFalse(register(2, 0, LLAMA, 16).createdPartition());
        Refusal e = assertThrows(Refusal.class, () -> register(3, 0, LLAMA, 32));
        assertEquals(Refusal.Kind.CONFLICT, e.kind());
        assertEquals(
                "block_size mismatch for model=llama routing_group=default: existing=16, requested=32", e.getMessage());
    }

    @Test
    void conflictsUseTheReferenceMessages() throws Exception {
        register(7, 0, LLAMA, 16);
        Refusal dup = assertThrows(Refusal.class, () -> register(7, 0, LLAMA, 16));
        assertEquals("instance 7 dp_rank 0 already registered", dup.getMessage());
        Refusal other = assertThrows(Refusal.class, () -> register(7, 1, MISTRAL, 16));
        assertEquals("instance 7 is already registered for model=llama routing_group=default", other.getMessage());
        assertEquals(Refusal.Kind.CONFLICT, other.kind());
    }

    @Test
    void unregisterRowsOfSpec74() throws Exception {
        register(1, 0, LLAMA, 16);
        register(1, 1, LLAMA, 16);
        register(2, 0, LLAMA, 16);

        assertEquals(
                "instance 9 not found",
                assertThrows(Refusal.class, () -> registry.unregister(9, "llama", null, null))
                        .getMessage());
        assertEquals(
                "instance 1 is registered for model=llama routing_group=default",
                assertThrows(Refusal.class, () -> registry.unregister(1, "mistral", null, null))
                        .getMessage());
        assertEquals(
                "instance 1 is registered for model=llama routing_group=default",
                assertThrows(Refusal.class, () -> registry.unregister(1, "llama", "acme", null))
                        .getMessage());
        assertEquals(
                "instance 1 dp_rank 5 not found",
                assertThrows(Refusal.class, () -> registry.unregister(1, "llama", "default", 5))
                        .getMessage());

        Registry.Unregistration rank1 = registry.unregister(1, "llama", null, 1);
        assertFalse(rank1.wholeWorker());
        assertFalse(rank1.partitionRemoved());

        Registry.Unregistration rank0 = registry.unregister(1, "llama", "default", 0);
        assertTrue(rank0.wholeWorker(), "last listener removes the whole worker");
        assertFalse(rank0.partitionRemoved());

        Registry.Unregistration last = registry.unregister(2, "llama", null, null);
        assertTrue(last.partitionRemoved());
        assertTrue(registry.partition(LLAMA).isEmpty());
        assertTrue(register(3, 0, LLAMA, 32).createdPartition(), "a removed partition may take a new block size");
    }

    @Test
    void workersAreFilteredAndSortedUnsigned() throws Exception {
        register(-1L, 0, LLAMA, 16);
        register(5, 0, MISTRAL, 8);
        register(4, 0, LLAMA, 16);
        List<Registry.WorkerView> all = registry.workers(null, null);
        assertEquals(
                List.of(4L, 5L, -1L),
                all.stream().map(Registry.WorkerView::workerId).toList());
        assertEquals(1, registry.workers(null, "acme").size());
        assertEquals(8, registry.workers("mistral", null).get(0).blockSize());
        assertEquals(0, registry.workers("nonexistent", null).size());
    }
}
