package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.StreamId;
import dev.kvindexer.partition.StreamSpec;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A poller thread that dies takes only its own listeners down, and only until the supervisor
 * replaces it: they show failed with the cause, ingest reports itself degraded, and then they receive again.
 */
class IngestSupervisionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final PartitionKey KEY = new PartitionKey("m", "t");
    private static final byte[] EMPTY_BATCH = BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, List.of(), 0);

    private Vertx vertx;
    private ZmqIngest ingest;
    private final Watermarks watermarks = new Watermarks();
    private PartitionRef partition;

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        EventCounters counters = new EventCounters();
        // Supervision only when the test asks for it, so each step can be looked at.
        ingest = new ZmqIngest(
                vertx,
                new ZmqIngest.Config(2, 1000, ServeConfig.DEFAULT_MAX_EVENT_BYTES, Duration.ofHours(1)),
                counters,
                () -> true);
        PartitionHost host = new PartitionHost(vertx, counters, watermarks, ingest.replays(), ingest.inFlight());
        partition = host.allocate(KEY, 16);
        host.start(partition).toCompletionStage().toCompletableFuture().get();
    }

    @AfterEach
    void stop() throws Exception {
        ingest.close();
        vertx.close().toCompletionStage().toCompletableFuture().get();
    }

    private Listener listen(long worker, TestPublisher pub) throws Exception {
        partition
                .openStream(new StreamSpec(worker, 0, 0, null))
                .toCompletionStage()
                .toCompletableFuture()
                .get();
        Listener l = new Listener(worker, 0, pub.endpoint(), null, partition, 0);
        ingest.start(l).toCompletionStage().toCompletableFuture().get();
        pub.awaitSubscriber();
        return l;
    }

    /** Publishes batch {@code seq}, always above the last one the worker published, and awaits its partition's watermark. */
    private void publishAndAwait(TestPublisher pub, long worker, long seq) {
        pub.publish("", seq, EMPTY_BATCH);
        Await.until(
                "the partition applies seq " + seq + " of worker " + worker,
                WAIT,
                () -> watermarks.seqOrMinusOne(new StreamId(KEY, worker, 0)) == seq);
    }

    @Test
    void aDeadPollerIsReplacedAndItsListenersReceiveAgainWhileTheOthersNeverStop() throws Exception {
        try (TestPublisher a = new TestPublisher();
                TestPublisher b = new TestPublisher()) {
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
            // Until a replacement connects again, which on loopback takes a millisecond once it runs.
            assertEquals(ListenerState.FAILED, la.state());
            assertTrue(la.lastError().contains("injected poller failure"), la.lastError());

            ingest.supervise();
            assertEquals(1, ingest.restarts());
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
    void aPollerWhoseSelectorBreaksIsReplacedAndItsListenersReconnect() throws Exception {
        try (TestPublisher a = new TestPublisher();
                TestPublisher b = new TestPublisher()) {
            Listener la = listen(1, a);
            Listener lb = listen(2, b);
            PollerThread pa = ingest.threadOf(la);
            publishAndAwait(a, 1, 0);
            // Closed under the loop, as a failing epoll would leave it: every connection of the poller goes with it.
            pa.execute(() -> pa.subscriber().close());
            Await.until("the poller thread died", WAIT, () -> !pa.isAlive());
            assertTrue(ingest.degradedReason().contains("ClosedSelectorException"), ingest.degradedReason());
            assertEquals(ListenerState.FAILED, la.state());
            assertTrue(la.lastError().contains("ClosedSelectorException"), la.lastError());

            ingest.supervise();
            a.awaitSubscriber();
            Await.until("the listener is active again", WAIT, () -> la.state() == ListenerState.ACTIVE);
            publishAndAwait(a, 1, 1);
            publishAndAwait(b, 2, 0);
            Await.until("ingest is no longer degraded", WAIT, () -> ingest.degradedReason() == null);
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
