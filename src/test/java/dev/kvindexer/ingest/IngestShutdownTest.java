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
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/** Shutdown finishes within its budget whatever state ZMQ is in. */
class IngestShutdownTest {
    @Test
    void closeReturnsWithinItsBudgetWhenAContextCannotTerminate() throws Exception {
        Vertx vertx = Vertx.vertx();
        ZmqIngest ingest = new ZmqIngest(vertx, new ZmqIngest.Settings(2, 100, ServeConfig.DEFAULT_MAX_EVENT_BYTES,
                ZmqIngest.Settings.SUPERVISE_EVERY), new EventCounters(), () -> true);
        ZMQ.Socket stuck = null;
        try (TestPublisher pub = new TestPublisher()) {
            Listener l = new Listener(1, 0, pub.endpoint(), null, unstarted(vertx, ingest), 0);
            ingest.start(l).toCompletionStage().toCompletableFuture().get();
            pub.awaitSubscriber();
            // A socket its ZContext does not know of and nobody closes, as one left by a thread that died: the
            // context's termination waits for it forever.
            stuck = ingest.threadOf(l).context().getContext().socket(SocketType.PUB);

            long start = System.nanoTime();
            ingest.close(Duration.ofSeconds(2));
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(took.compareTo(Duration.ofSeconds(6)) < 0, "close took " + took);
            assertTrue(closerStillWaiting(), "the context really could not terminate");
        } finally {
            if (stuck != null) {
                stuck.close();
            }
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
        Await.until("the abandoned close finished once the socket was closed", Duration.ofSeconds(10),
                () -> !closerStillWaiting());
    }

    private static boolean closerStillWaiting() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("ingest-close") && t.isAlive());
    }

    /** A partition that is never deployed: what is sent to it is never taken. */
    private static dev.kvindexer.partition.PartitionRef unstarted(Vertx vertx, ZmqIngest ingest) {
        return new PartitionHost(vertx, new EventCounters(), new Watermarks(), ingest.replays(), ingest.inFlight())
                .allocate(new PartitionKey("m", "t"), 16);
    }
}
