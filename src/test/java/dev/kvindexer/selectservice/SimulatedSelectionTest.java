package dev.kvindexer.selectservice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.EngineHashKind;
import dev.kvindexer.sim.PromptSource;
import dev.kvindexer.sim.QuietSimulations;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.Simulation;
import dev.kvindexer.support.Await;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The selection service's walkthrough with simulated engines ({@code simulate --register-select}): each instance joins
 * the catalog with its ranks' publishers, the service's index takes their events, and {@code /select} of a prompt
 * they hold is answered with its overlap.
 */
class SimulatedSelectionTest {
    @Test
    void simulatedEnginesJoinTheCatalogAndTheirBlocksAreSelectedOn() throws Exception {
        try (SelectServiceFixture service = SelectServiceFixture.start(Map.of());
                Simulation sim = Simulation.start(QuietSimulations.of(2, 2, EngineHashKind.RANDOM, 40, 1, null))) {
            new RegisterClient(URI.create(service.http.base())).catalog(sim.engines(), 2, "m", "default");
            for (SimulatedEngine e : sim.engines()) {
                assertTrue(e.awaitSubscribers(1, Await.PATIENCE), "the service subscribed to " + e.endpoint());
            }
            JsonArray workers = new JsonArray(service.http.get("/workers").body());
            assertEquals(2, workers.size(), workers.encode());
            int[] first;
            try (PromptSource prompts = sim.openPrompts()) {
                first = prompts.next();
            }
            sim.run(sim.openPrompts());
            JsonArray tokens = new JsonArray();
            for (int t : first) {
                tokens.add(t);
            }
            String select = new JsonObject()
                    .put("model_name", "m")
                    .put("token_ids", tokens)
                    .put("advisory", true)
                    .encode();
            Await.until("the selection sees the first prompt's blocks", Await.PATIENCE, () -> {
                JsonObject answer =
                        new JsonObject(service.http.post("/select", select).body());
                JsonObject overlap = answer.getJsonObject("overlap");
                return overlap != null && overlap.getLong("gpu", 0L) > 0;
            });
            JsonObject answer =
                    new JsonObject(service.http.post("/select", select).body());
            assertTrue(
                    answer.getLong("worker_id") == 1 || answer.getLong("worker_id") == 2,
                    "a simulated worker: " + answer);
        }
    }
}
