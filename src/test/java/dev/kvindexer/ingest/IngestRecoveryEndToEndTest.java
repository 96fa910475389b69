package dev.kvindexer.ingest;

import static dev.kvindexer.support.IngestHarness.awaitIdle;
import static dev.kvindexer.support.IngestHarness.truth;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * Through a whole node: while an ingest thread is dead, /ready says so and /workers shows its listener failed with
 * the cause; the supervisor brings it back, and gap replay fetches what the engine published meanwhile.
 */
class IngestRecoveryEndToEndTest {
    private static final int BLOCK = 16;

    @Test
    void aDeadIngestThreadShowsAsNotReadyThenRecoversWithoutLosingBlocks() throws Exception {
        try (IngestHarness h = IngestHarness.start()) {
            SimulatedEngine e = h.engine(EngineConfig.local(3, 0).withCache(BLOCK, 64, 0));
            h.registerAndSubscribe(e);
            SyntheticPrompts prompts = SyntheticPrompts.standard(3, BLOCK);
            for (int i = 0; i < 20; i++) {
                e.submit(prompts.next());
            }
            awaitIdle(e);
            h.awaitDumpEquals("before the failure", truth(e));

            ZmqIngest ingest = h.node().ingest();
            Listener listener = h.node().registry().listener(3, 0);
            long subscriptions = e.subscriptions();
            // Holding the ingest's lock keeps the supervisor from replacing the thread while the test looks.
            synchronized (ingest) {
                PollerThread t = ingest.threadOf(listener);
                t.execute(() -> {
                    throw new IllegalStateException("injected");
                });
                Await.until("the ingest thread died", IngestHarness.WAIT, () -> !t.isAlive());
                HttpResponse<String> ready = h.http().get("/ready");
                assertEquals(503, ready.statusCode(), ready.body());
                assertTrue(ready.body().contains("injected"), ready.body());
                JsonObject l = h.listener(3, 0);
                assertEquals("failed", l.getString("status"), l.encode());
                assertTrue(l.getString("last_error").contains("injected"), l.encode());
                MetricsPage degraded = MetricsPage.of(h.http());
                assertEquals(1.0, degraded.value("kvindexer_ingest_degraded"));
                assertEquals(0.0, degraded.value("kvindexer_ready"), "/ready answers 503");
                // Published while no socket listens: only the engine's replay ring keeps these.
                for (int i = 0; i < 20; i++) {
                    e.submit(prompts.next());
                }
                awaitIdle(e);
            }
            h.awaitSubscribed(e, subscriptions);
            Await.equal("the listener is active again", IngestHarness.WAIT, "active", () -> h.listenerStatus(3, 0));
            Await.equal(
                    "ready again",
                    IngestHarness.WAIT,
                    200,
                    () -> h.http().get("/ready").statusCode());
            for (int i = 0; i < 5; i++) {
                e.submit(prompts.next());
            }
            awaitIdle(e);
            h.awaitDumpEquals("the blocks published during the outage were replayed", truth(e));
            MetricsPage metrics = MetricsPage.of(h.http());
            assertEquals(1.0, metrics.value("kvindexer_ingest_restarts_total"));
            assertEquals(0.0, metrics.value("kvindexer_ingest_degraded"));
            assertEquals(1.0, metrics.value("kvindexer_ready"));
        }
    }
}
