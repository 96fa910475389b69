package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Many listeners share a fixed set of threads, and a flood cannot queue unbounded batches. */
class IngestScaleTest {

    @Test
    void twoHundredRegistrationsKeepTheThreadCountBounded() throws Exception {
        int port = FreePort.any();
        IndexerNode node = IndexerNode.start(ServeConfig.local(0));
        try {
            HttpJson http = new HttpJson(node.httpPort());
            int before = Thread.activeCount();
            for (int i = 0; i < 200; i++) {
                // Nothing listens there: every listener keeps reconnecting, the worst case for a thread-per-socket
                // design.
                assertEquals(
                        201,
                        http.post(
                                        "/register",
                                        "{\"instance_id\":" + i + ",\"endpoint\":\"tcp://127.0.0.1:" + port
                                                + "\",\"model_name\":\"m" + (i % 7) + "\",\"block_size\":16}")
                                .statusCode());
            }
            JsonArray workers = new JsonArray(http.get("/workers").body());
            assertEquals(200, workers.size());
            int after = Thread.activeCount();
            assertTrue(after - before <= 8, "threads grew from " + before + " to " + after);
            assertEquals(1, node.ingest().threadCount());
            for (int i = 0; i < workers.size(); i++) {
                assertEquals(
                        "pending",
                        workers.getJsonObject(i).getString("status"),
                        "no engine there: " + workers.getJsonObject(i));
            }
        } finally {
            node.close();
        }
    }

    @Test
    void inFlightBatchesStopAtTheBoundWhenPartitionsDoNotKeepUp() throws Exception {
        Vertx vertx = Vertx.vertx();
        // No partition consumes this address, so nothing is ever taken: the bound alone limits what is read.
        ZmqIngest ingest = new ZmqIngest(
                vertx,
                new ZmqIngest.Config(1, 5, ServeConfig.DEFAULT_MAX_EVENT_BYTES, ZmqIngest.Config.SUPERVISE_EVERY),
                new EventCounters(),
                () -> true);
        try (TestPublisher pub = new TestPublisher()) {
            Listener l = new Listener(1, 0, pub.endpoint(), null, unstarted(vertx, ingest), 0);
            ingest.start(l).toCompletionStage().toCompletableFuture().get();
            pub.awaitSubscriber();
            byte[] empty = BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, 1.0, List.of(), 0);
            for (int s = 0; s < 100; s++) {
                pub.publish("", s, empty);
            }
            Await.until(
                    "ingest reached its bound",
                    Duration.ofSeconds(10),
                    () -> ingest.inFlight().current() == 5);
            long deadline = System.nanoTime() + Duration.ofMillis(300).toNanos();
            while (System.nanoTime() < deadline) {
                assertEquals(5, ingest.inFlight().current(), "read past the in-flight bound");
            }
        } finally {
            ingest.close();
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    /** A partition that is never deployed: what is sent to it is never taken. */
    private static dev.kvindexer.partition.PartitionRef unstarted(Vertx vertx, ZmqIngest ingest) {
        return new PartitionHost(vertx, new EventCounters(), new Watermarks(), ingest.replays(), ingest.inFlight())
                .allocate(new PartitionKey("m", "t"), 16);
    }
}
