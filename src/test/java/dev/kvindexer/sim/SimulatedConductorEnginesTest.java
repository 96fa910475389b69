package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Simulated engines of the C++ Conductor's kind ({@code --hash-kind sha256-cbor}): they register through its msgpack
 * API with its hash profile, and the Conductor's own {@code /query}, which recomputes vLLM's block hashes from the
 * tokens, finds the blocks they published.
 */
class SimulatedConductorEnginesTest {
    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    @Test
    void theConductorsQueryFindsWhatTheEnginesPublished() throws Exception {
        SimulationConfig config = QuietSimulations.of(
                2,
                1,
                EngineHashKind.SHA256_CBOR,
                40,
                100,
                URI.create("http://127.0.0.1:" + indexer.node().httpPort()));
        try (Simulation sim = Simulation.start(config)) {
            sim.registerAll();
            for (SimulatedEngine e : sim.engines()) {
                assertTrue(e.awaitSubscribers(1, Await.PATIENCE), "the node subscribed to " + e.endpoint());
            }
            int[] first;
            try (PromptSource prompts = sim.openPrompts()) {
                first = prompts.next();
            }
            sim.run(sim.openPrompts());
            byte[] query = LoopbackEngines.conductorQuery("m", first);
            Await.until("the Conductor's /query finds the first prompt", Await.PATIENCE, () -> {
                Map<String, Long> matched =
                        longestMatched(indexer.http().postBytes("/query", query, "application/msgpack"));
                return matched.values().stream().anyMatch(tokens -> tokens >= 16);
            });
            Map<String, Long> matched =
                    longestMatched(indexer.http().postBytes("/query", query, "application/msgpack"));
            assertEquals(2, matched.size(), "both engines are instances of the Conductor's context: " + matched);
            assertTrue(matched.containsKey("100") && matched.containsKey("101"), matched.toString());
        }
    }

    /** instance id → longest_matched of a Conductor /query answer; none for another status. */
    private static Map<String, Long> longestMatched(HttpResponse<byte[]> r) {
        if (r.statusCode() != 200) {
            return Map.of();
        }
        try {
            Map<String, Long> matched = LoopbackEngines.longestMatched(r.body());
            if (matched == null) {
                throw new AssertionError("not a Conductor /query answer: " + r.body().length + " bytes");
            }
            return matched;
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
