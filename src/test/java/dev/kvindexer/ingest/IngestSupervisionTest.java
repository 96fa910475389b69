package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.LocalCodec;
import dev.kvindexer.partition.PartitionKey;
import dev.kvindexer.partition.PartitionMessages;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A poller thread or its ZMQ I/O thread that dies takes only its own listeners down, and only until the supervisor
 * replaces it: they show failed with the cause, ingest reports itself degraded, and then they receive again.
 */
class IngestSupervisionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String ADDRESS = "kvindexer.partition.test";
    private static final byte[] EMPTY_BATCH = BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, List.of(), 0);

    private Vertx vertx;
    private ZmqIngest ingest;
    private final Map<Long, AtomicLong> received = new ConcurrentHashMap<>();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        LocalCodec.registerAll(vertx.eventBus());
        // Supervision only when the test asks for it, so each step can be looked at.
        ingest = new ZmqIngest(vertx, new ZmqIngest.Settings(2, 1000, ServeConfig.DEFAULT_MAX_EVENT_BYTES,
                Duration.ofHours(1)), new EventCounters(), (w, d) -> null, () -> true);
        vertx.eventBus().<PartitionMessages.ApplyBatch>localConsumer(ADDRESS, m -> {
            received.computeIfAbsent(m.body().workerId(), k -> new AtomicLong()).incrementAndGet();
            ingest.inFlight().taken();
        });
    }

    @AfterEach
    void stop() throws Exception {
        ingest.close();
        vertx.close().toCompletionStage().toCompletableFuture().get();
    }

    private Listener listen(long worker, TestPublisher pub) throws Exception {
        Listener l = new Listener(worker, 0, pub.endpoint(), null, new PartitionKey("m", "t"), ADDRESS, 16, 0);
        ingest.start(l).toCompletionStage().toCompletableFuture().get();
        pub.awaitSubscriber();
        return l;
    }

    private long received(long worker) {
        AtomicLong n = received.get(worker);
        return n == null ? 0 : n.get();
    }

    private void publishAndAwait(TestPublisher pub, long worker, long seq) {
        long before = received(worker);
        pub.publish("", seq, EMPTY_BATCH);
        Await.until("worker " + worker + " receives seq " + seq, WAIT, () -> received(worker) > before);
    }

    @Test
    void aDeadPollerIsReplacedAndItsListenersReceiveAgainWhileTheOthersNeverStop() throws Exception {
        try (TestPublisher a = new TestPublisher(); TestPublisher b = new TestPublisher()) {
            Listener la = listen(1, a);
            Listener lb = listen(2, b);
            PollerThread pa = ingest.threadOf(la);
            assertNotSame(pa, ingest.threadOf(lb), "two threads, one listener each");
            publishAndAwait(a, 1, 0);
            publishAndAwait(b, 2, 0);

            pa.execute(() -> {
                throw new IllegalStateException("injected poller failure");
            });
            Await.until("the poller thread died", WAIT, () -> !pa.isAlive());
            String degraded = ingest.degradedReason();
            assertNotNull(degraded, "a dead poller shows before the supervisor has run");
            assertTrue(degraded.contains("injected poller failure"), degraded);
            publishAndAwait(b, 2, 1);

            ingest.supervise();
            assertEquals(1, ingest.restarts());
            assertEquals(ListenerState.FAILED, la.state());
            assertTrue(la.lastError().contains("injected poller failure"), la.lastError());
            assertEquals(ListenerState.ACTIVE, lb.state(), "the other thread's listener is untouched");
            assertNotSame(pa, ingest.threadOf(la), "a replacement serves the listener");

            a.awaitSubscriber();
            Await.until("the listener is active again", WAIT, () -> la.state() == ListenerState.ACTIVE);
            Await.until("ingest is no longer degraded", WAIT, () -> ingest.degradedReason() == null);
            publishAndAwait(a, 1, 5);
            publishAndAwait(b, 2, 2);
        }
    }

    @Test
    void aDeadZmqIoThreadIsNoticedAndItsContextReplaced() throws Exception {
        try (TestPublisher a = new TestPublisher(); TestPublisher b = new TestPublisher()) {
            Listener la = listen(1, a);
            Listener lb = listen(2, b);
            PollerThread pa = ingest.threadOf(la);
            // What JeroMQ calls when an I/O thread of the context ends with an uncaught error.
            pa.context().getUncaughtExceptionHandler().uncaughtException(new Thread("iothread-2"),
                    new IllegalStateException("injected I/O failure"));
            assertTrue(ingest.degradedReason().contains("injected I/O failure"), ingest.degradedReason());

            ingest.supervise();
            assertEquals(ListenerState.FAILED, la.state());
            assertTrue(la.lastError().contains("injected I/O failure"), la.lastError());
            Await.until("the old poller stopped", WAIT, () -> !pa.isAlive());
            a.awaitSubscriber();
            Await.until("the listener is active again", WAIT, () -> la.state() == ListenerState.ACTIVE);
            publishAndAwait(a, 1, 0);
            publishAndAwait(b, 2, 0);
            assertNull(ingest.degradedReason());
        }
    }

    @Test
    void unregisteringFromADeadPollerCompletesAndIsNotReopened() throws Exception {
        try (TestPublisher a = new TestPublisher()) {
            Listener la = listen(1, a);
            PollerThread pa = ingest.threadOf(la);
            pa.execute(() -> {
                throw new IllegalStateException("injected");
            });
            Await.until("the poller thread died", WAIT, () -> !pa.isAlive());
            var stopped = ingest.stop(la);
            ingest.supervise();
            stopped.toCompletionStage().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertNull(ingest.threadOf(la), "a stopped listener is not moved to the replacement");
        }
    }
}
