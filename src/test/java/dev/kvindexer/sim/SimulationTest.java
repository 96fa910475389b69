package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.vertx.core.json.JsonObject;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Several engines × ranks driven together, restarts by request count, and registration bodies. */
class SimulationTest {
    private static SimulationConfig config(long requests, long restartAfter, URI register) {
        return new SimulationConfig(
                2,
                2,
                "127.0.0.1",
                "127.0.0.1",
                0,
                0,
                BatchEncoder.Format.SGLANG_ARRAY,
                EngineHashKind.RANDOM,
                16,
                32,
                64,
                requests,
                0,
                0.1,
                5,
                null,
                512,
                restartAfter,
                ReplayStyle.THREE_FRAME,
                "m",
                "t",
                100,
                register,
                "",
                Duration.ZERO,
                Duration.ZERO);
    }

    @Test
    void drivesEveryRankAndPublishesOneBatchPerRequest() throws Exception {
        try (Simulation sim = Simulation.start(config(200, 0, null))) {
            Simulation.Summary s = sim.run(sim.openPrompts());
            assertEquals(200, s.requests());
            assertEquals(4, s.engines().size());
            assertEquals(
                    200,
                    s.engines().stream()
                            .mapToLong(Simulation.EngineSummary::batches)
                            .sum());
            for (Simulation.EngineSummary e : s.engines()) {
                assertTrue(e.batches() > 0, "every rank gets traffic: " + e);
                assertTrue(e.deviceBlocks() <= 32 && e.hostBlocks() <= 64);
            }
            assertEquals(101, sim.engine(1, 0).instanceId());
            assertEquals(1, sim.engine(1, 1).dpRank());
            for (SimulatedEngine e : sim.engines()) {
                assertTrue(e.held().stream().allMatch(b -> b.worker() == e.instanceId() && b.dpRank() == e.dpRank()));
            }
        }
    }

    @Test
    void restartsAnInstanceWithAllItsRanksAfterEveryNRequests() throws Exception {
        try (Simulation sim = Simulation.start(config(100, 10, null))) {
            Simulation.Summary s = sim.run(sim.openPrompts());
            for (int i = 0; i < 2; i++) {
                SimulatedEngine r0 = sim.engine(i, 0);
                SimulatedEngine r1 = sim.engine(i, 1);
                assertEquals(r0.generation(), r1.generation(), "ranks of one instance restart together");
                assertTrue(r0.generation() >= 1);
                assertTrue(
                        r0.generationBatches() + r1.generationBatches() < 10,
                        "after the last restart fewer than 10 requests remain");
            }
        }
    }

    @Test
    void registersEveryRankWithItsOwnEndpoints() throws Exception {
        List<JsonObject> bodies = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/register", x -> {
            bodies.add(new JsonObject(new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
            byte[] ok = "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(bodies.size() == 4 ? 409 : 201, ok.length);
            x.getResponseBody().write(ok);
            x.close();
        });
        server.start();
        try (Simulation sim = Simulation.start(config(
                1, 0, URI.create("http://127.0.0.1:" + server.getAddress().getPort())))) {
            // The fourth answer is a 409: registration must report it, not swallow it, as the indexer's answer (the
            // simulator then says the indexer refused, not that it cannot reach it).
            RegisterClient.Refused refused = assertThrows(RegisterClient.Refused.class, sim::registerAll);
            assertTrue(refused.getMessage().contains("409 {\"status\":\"ok\"}"), refused.getMessage());
            assertEquals(4, bodies.size());
            JsonObject b = bodies.get(3);
            SimulatedEngine e = sim.engine(1, 1);
            assertEquals(101L, b.getLong("instance_id"));
            assertEquals(1, b.getInteger("dp_rank"));
            assertEquals(e.endpoint(), b.getString("endpoint"));
            assertEquals(e.replayEndpoint(), b.getString("replay_endpoint"));
            assertEquals("m", b.getString("model_name"));
            assertEquals(16, b.getInteger("block_size"));
            assertEquals("t", b.getString("routing_group"));
        } finally {
            server.stop(0);
        }
    }

    @Test
    void rejectsOverlappingLiveAndReplayPortRanges() {
        assertThrows(
                IllegalArgumentException.class,
                () -> new SimulationConfig(
                        2,
                        2,
                        "*",
                        "h",
                        5557,
                        5558,
                        BatchEncoder.Format.VLLM_MAP,
                        EngineHashKind.SEQUENCE,
                        16,
                        8,
                        0,
                        1,
                        0,
                        0,
                        1,
                        null,
                        512,
                        0,
                        ReplayStyle.FOUR_FRAME,
                        "m",
                        "t",
                        1,
                        null,
                        "",
                        Duration.ZERO,
                        Duration.ZERO));
    }
}
