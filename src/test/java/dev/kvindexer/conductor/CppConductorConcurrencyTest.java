package dev.kvindexer.conductor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.hash.VllmBlockHasher;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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

        AtomicBoolean growing = new AtomicBoolean(true);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> readers = new ArrayList<>();
        int[] answers = new int[4];
        for (int t = 0; t < 4; t++) {
            int me = t;
            readers.add(new Thread(() -> {
                int last = -1;
                boolean shrinking = false;
                try {
                    while (!done.get()) {
                        boolean growingBefore = growing.get();
                        int gpu = gpuOf(await(conductor.query(CONTEXT, null, TOKENS, null)));
                        // Removals start only once the flag is down: a query that ends with it still up saw none,
                        // and one that starts with it down saw every store.
                        if (growing.get()) {
                            assertTrue(gpu >= last, "a growing prefix went from " + last + " to " + gpu);
                            last = gpu;
                        } else if (!growingBefore) {
                            assertTrue(
                                    !shrinking || gpu <= last, "a shrinking prefix went from " + last + " to " + gpu);
                            shrinking = true;
                            last = gpu;
                        }
                        answers[me]++;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        readers.forEach(Thread::start);
        for (int i = 0; i < BLOCKS; i++) {
            applied(conductor, engine, new CppConductorEvent.GpuStored(new long[] {keys[i]}));
        }
        assertEquals(BLOCKS, gpuOf(await(conductor.query(CONTEXT, null, TOKENS, null))));
        growing.set(false);
        for (int i = BLOCKS - 1; i >= 0; i--) {
            applied(conductor, engine, new CppConductorEvent.GpuRemoved(new long[] {keys[i]}));
        }
        done.set(true);
        for (Thread r : readers) {
            r.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        for (int n : answers) {
            assertTrue(n > 0, "every reader was answered");
        }
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
