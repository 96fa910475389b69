package dev.kvindexer.conductor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.hash.VllmBlockHasher;
import dev.kvindexer.support.PrefixReaders;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Queries run on their callers' threads while events apply on the conductor's own: every answer is a state the
 * events went through (a prefix that only grows while blocks are only stored, then only shrinks), never a torn one.
 */
class CppConductorConcurrencyTest {
    private static final HashProfile PROFILE = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0");
    private static final CppConductorState.ContextKey CONTEXT =
            new CppConductorState.ContextKey("default", "m", "", 16);
    private static final int BLOCKS = 256;
    private static final int[] TOKENS = IntStream.range(0, BLOCKS * 16).toArray();

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void queriesOnManyThreadsSeeOnlyStatesTheEventsWentThrough() throws Exception {
        CppConductor conductor = await(CppConductor.deploy(vertx));
        CppConductorRegistration engine =
                new CppConductorRegistration("tcp://e", "vLLM", "m", "1", 16, 0, PROFILE, "", "", "default", null);
        assertInstanceOf(CppConductorState.Added.class, await(conductor.register(engine)));
        VllmBlockHasher.Chain chain = new VllmBlockHasher(PROFILE).chain(TOKENS, 16, null, null);
        long[] keys = new long[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            keys[i] = chain.nextKey();
        }

        PrefixReaders readers =
                new PrefixReaders(4, () -> gpuOf(await(conductor.query(CONTEXT, null, TOKENS, null))), gpu -> true);
        for (int i = 0; i < BLOCKS; i++) {
            applied(conductor, engine, new CppConductorEvent.GpuStored(new long[] {keys[i]}));
        }
        assertEquals(BLOCKS, gpuOf(await(conductor.query(CONTEXT, null, TOKENS, null))));
        readers.shrinking();
        for (int i = BLOCKS - 1; i >= 0; i--) {
            applied(conductor, engine, new CppConductorEvent.GpuRemoved(new long[] {keys[i]}));
        }
        readers.stop();
        assertArrayEquals(
                new int[] {0, 0, 0},
                await(conductor.query(CONTEXT, null, TOKENS, null))
                        .instances()
                        .get("1")
                        .get(0));
    }

    private static int gpuOf(CppConductorState.Matches m) {
        return m.instances().get("1").get(0)[0];
    }

    /** Applies one event and waits until the conductor has taken it. */
    private static void applied(CppConductor conductor, CppConductorRegistration r, CppConductorEvent e)
            throws InterruptedException {
        CountDownLatch taken = new CountDownLatch(1);
        conductor.apply(r.serviceKey(), List.of(e), taken::countDown);
        assertTrue(taken.await(30, TimeUnit.SECONDS));
    }

    private static <T> T await(io.vertx.core.Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
