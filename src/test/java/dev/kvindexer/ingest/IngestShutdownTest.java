package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** Shutdown finishes within its budget whatever state the pollers are in. */
class IngestShutdownTest {
    @Test
    void closeReturnsWithinItsBudgetWhenAPollerIsStuck() throws Exception {
        Vertx vertx = Vertx.vertx();
        ZmqIngest ingest = new ZmqIngest(
                vertx,
                new ZmqIngest.Config(2, 100, ServeConfig.DEFAULT_MAX_EVENT_BYTES, ZmqIngest.Config.SUPERVISE_EVERY),
                new EventCounters(),
                () -> true);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (TestPublisher pub = new TestPublisher()) {
            Listener l = new Listener(1, 0, pub.endpoint(), null, unstarted(vertx, ingest), 0);
            ingest.start(l).toCompletionStage().toCompletableFuture().get();
            pub.awaitSubscriber();
            PollerThread poller = ingest.threadOf(l);
            // A call that does not return, as a partition or a decoder that hangs would make.
            poller.execute(() -> {
                entered.countDown();
                awaitQuietly(release);
            });
            entered.await();

            long start = System.nanoTime();
            ingest.close(Duration.ofSeconds(2));
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            // Returning at all is the point (a stuck poller would hold close forever); how soon is the budget's job.
            assertTrue(took.compareTo(Await.PATIENCE) < 0, "close took " + took);
            assertTrue(poller.isAlive(), "the poller really was stuck");

            release.countDown();
            Await.until("the stuck poller ended once released", Duration.ofSeconds(10), () -> !poller.isAlive());
            // Its connection closed on its way out: the publisher sees the subscriber go.
            pub.awaitUnsubscribe();
        } finally {
            release.countDown();
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // Stuck means stuck: only the latch ends the wait.
            }
        }
    }

    /** A partition that is never deployed: what is sent to it is never taken. */
    private static dev.kvindexer.partition.PartitionRef unstarted(Vertx vertx, ZmqIngest ingest) {
        return new PartitionHost(vertx, new EventCounters(), new Watermarks(), ingest.replays(), ingest.inFlight())
                .allocate(new PartitionKey("m", "t"), 16);
    }
}
