package dev.kvindexer.e2e;

import static dev.kvindexer.support.IngestHarness.awaitIdle;
import static dev.kvindexer.support.IngestHarness.truth;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HostileZmtpPublisher;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonObject;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A publisher that sends what no engine would, a frame over the size limit or a header declaring gigabytes, costs
 * only its own connection: it is counted, dropped and made again, and every other publisher keeps flowing.
 */
class HostileIngestTest {
    private static final int BLOCK = 16;
    private static final long LIMIT = 1 << 20;

    private IngestHarness h;

    @AfterEach
    void stop() {
        if (h != null) {
            h.close();
        }
    }

    private double frameErrors() {
        return MetricsPage.of(h.http()).value("kvindexer_decode_errors_total{kind=\"frame\"}");
    }

    @Test
    void aFrameDeclaringGigabytesIsRefusedBeforeAllocationAndIngestGoesOn() throws Exception {
        h = IngestHarness.start(ServeConfig.local(0).withMaxEventBytes(LIMIT));
        SimulatedEngine honest = h.engine(EngineConfig.local(1, 0).withCache(BLOCK, 64, 0));
        h.registerAndSubscribe(honest);
        long directBefore = directMemory();
        try (HostileZmtpPublisher bomb = new HostileZmtpPublisher(1_500_000_000L)) {
            h.register(new JsonObject()
                    .put("instance_id", 99)
                    .put("endpoint", bomb.endpoint())
                    .put("model_name", IngestHarness.MODEL)
                    .put("block_size", BLOCK));
            // The SUB drops the connection at the header and makes a new one, which gets the same bomb.
            Await.until("the bombed listener reconnected twice", IngestHarness.WAIT, () -> bomb.accepted() >= 3);
            Await.until("the refused frames are counted", IngestHarness.WAIT, () -> frameErrors() >= 2);
            String error = h.listener(99, 0).getString("last_error");
            assertTrue(error != null && error.contains("--max-event-bytes"), "last_error: " + error);

            SyntheticPrompts prompts = SyntheticPrompts.standard(5, BLOCK);
            for (int i = 0; i < 50; i++) {
                honest.submit(prompts.next());
            }
            awaitIdle(honest);
            h.awaitDumpEquals("the honest engine's blocks arrive while the bomb goes on", truth(honest));
        }
        long grown = directMemory() - directBefore;
        assertTrue(grown < 64L << 20, "direct memory grew by " + grown + " bytes");
        assertEquals(200, h.http().get("/ready").statusCode());
    }

    @Test
    void aMessageOverTheLimitCostsItsConnectionWhichIsMadeAgain() throws Exception {
        h = IngestHarness.start(ServeConfig.local(0).withMaxEventBytes(LIMIT));
        try (TestPublisher pub = new TestPublisher()) {
            h.register(new JsonObject()
                    .put("instance_id", 7)
                    .put("endpoint", pub.endpoint())
                    .put("model_name", IngestHarness.MODEL)
                    .put("block_size", BLOCK));
            pub.awaitSubscriber();
            pub.publish("", 0, new byte[(int) LIMIT + 1]);
            // A new subscription arrives only when the indexer connected again.
            pub.awaitSubscriber();
            Await.until("the oversize message is counted", IngestHarness.WAIT, () -> frameErrors() == 1);

            int[] tokens = new int[BLOCK];
            byte[] store = BatchEncoder.batch(
                    BatchEncoder.Format.VLLM_MAP,
                    1.0,
                    List.of(new EngineEvent.Store(new long[] {42}, null, tokens, BLOCK, null, null)),
                    0);
            pub.publish("", 1, store);
            Await.until(
                    "the next batch of the same publisher is applied",
                    IngestHarness.WAIT,
                    () -> h.counters().appliedCount("stored", "ok") == 1);
            assertEquals("active", h.listenerStatus(7, 0));
            // Connected again since: the error is shown as past, with its time, not as the listener's state.
            JsonObject listener = h.listener(7, 0);
            assertNull(listener.getString("last_error"), listener.encode());
            assertTrue(listener.getString("previous_error").contains("--max-event-bytes"), listener.encode());
            assertTrue(
                    java.time.Instant.parse(listener.getString("previous_error_at"))
                            .isBefore(java.time.Instant.now().plusSeconds(1)),
                    listener.encode());
        }
    }

    private static long directMemory() {
        long used = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            used += pool.getMemoryUsed();
        }
        return used;
    }
}
