package dev.kvindexer.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.DumpBlocks;
import dev.kvindexer.support.HostileScripts;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.ScriptedZmtpPeer;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every hostile or broken publisher at once against one node at -Xmx256m with the production option that ends the
 * process on an OutOfMemoryError: each is dropped for its own reason, shown in its listener's last_error and tried
 * again; the node's network budget is never passed; an honest engine on the same node keeps applying, exactly.
 */
class HostilePublishersTest {
    private static final int BLOCK = 16;
    private static final String MODEL = "m";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final long MIB = 1 << 20;

    /** A hostile peer, the registrations pointing at it, and what its listeners' last_error must say. */
    private record Attack(String name, ScriptedZmtpPeer peer, List<Long> instances, String expected) {}

    @TempDir
    Path logs;

    @Test
    void everyHostilePublisherCostsOnlyItsOwnConnection() throws Exception {
        List<String> jvm = new ArrayList<>(ChildNode.SMALL_JVM);
        jvm.add("-XX:+ExitOnOutOfMemoryError");
        List<Attack> attacks = new ArrayList<>();
        try (ChildNode node = ChildNode.start(
                        logs, "hostile", jvm, List.of("--message-timeout", "3", "--ingest-threads", "2"));
                TestPublisher flood = new TestPublisher()) {
            HttpJson http = new HttpJson(node.awaitReady(ChildNode.START_PATIENCE));
            long next = 100;
            attacks.add(attack("empty parts", HostileScripts.endlessEmptyParts(), next++, 1, "parts"));
            attacks.add(attack("one-byte parts", HostileScripts.endlessOneByteParts(), next++, 1, "parts"));
            attacks.add(attack("thousands of parts", HostileScripts.manyParts(5000), next++, 1, "parts"));
            attacks.add(attack("ping flood", HostileScripts.pingFlood(), next++, 1, "reads nothing"));
            attacks.add(attack(
                    "60 MiB declared, a byte every 4 s, 8 registrations",
                    HostileScripts.declareThenDrip(60 * MIB, 10, Duration.ofSeconds(4)),
                    next,
                    8,
                    "not whole within 3000 ms"));
            next += 8;
            attacks.add(attack(
                    "50 MiB sent of a 60 MiB message",
                    HostileScripts.declareThenDrip(60 * MIB, (int) (50 * MIB), Duration.ofSeconds(4)),
                    next++,
                    1,
                    "network budget"));
            attacks.add(attack(
                    "a frame declaring 1.5 GB",
                    HostileScripts.frameBomb(1_500_000_000L),
                    next++,
                    1,
                    "max-event-bytes"));
            attacks.add(attack(
                    "half a frame then silence", HostileScripts.halfFrameThenSilence(), next++, 1, "not whole within"));
            attacks.add(attack(
                    "a drip-fed handshake",
                    HostileScripts.dripFedHandshake(Duration.ofMillis(500)),
                    next++,
                    1,
                    "no ZMTP handshake"));
            attacks.add(attack("a flapping publisher", HostileScripts.flapping(), next++, 1, "connection lost"));
            attacks.add(attack("HTTP, no greeting", HostileScripts.notZmtp(), next++, 1, "not a ZMTP peer"));
            attacks.add(attack("ZMTP 2", HostileScripts.greeting(2, "NULL"), next++, 1, "version 2"));
            attacks.add(attack("CURVE", HostileScripts.greeting(3, "CURVE"), next++, 1, "mechanism CURVE"));
            for (Attack a : attacks) {
                for (long instance : a.instances()) {
                    register(
                            http,
                            new JsonObject()
                                    .put("instance_id", instance)
                                    .put("endpoint", a.peer().endpoint())
                                    .put("model_name", MODEL)
                                    .put("block_size", BLOCK));
                }
            }
            // Valid batches as fast as the socket takes them: a store and a remove of the same 256 blocks each.
            register(
                    http,
                    new JsonObject()
                            .put("instance_id", 90)
                            .put("endpoint", flood.endpoint())
                            .put("model_name", "flood")
                            .put("block_size", BLOCK));
            flood.awaitSubscriber();
            Thread flooding = flood(flood);
            // Honest publishers whose replay endpoints are not: a gap in each stream sends the node to them.
            List<TestPublisher> gapped = new ArrayList<>();
            ScriptedZmtpPeer[] replays = {
                new ScriptedZmtpPeer(HostileScripts.endlessEmptyParts("ROUTER"), true),
                new ScriptedZmtpPeer(
                        HostileScripts.declareThenDrip("ROUTER", 60 * MIB, 10, Duration.ofSeconds(1)), true)
            };
            for (int i = 0; i < replays.length; i++) {
                TestPublisher pub = new TestPublisher();
                gapped.add(pub);
                register(
                        http,
                        new JsonObject()
                                .put("instance_id", 80 + i)
                                .put("endpoint", pub.endpoint())
                                .put("replay_endpoint", replays[i].endpoint())
                                .put("model_name", "gapped")
                                .put("block_size", BLOCK));
                pub.awaitSubscriber();
                pub.publish("", 0, storeBatch(1_000 * (i + 1)));
                pub.publish("", 5, storeBatch(1_000 * (i + 1) + 1));
            }

            try (SimulatedEngine honest =
                    SimulatedEngine.start(EngineConfig.local(1, 0).withCache(BLOCK, 64, 0))) {
                register(http, RegisterClient.body(honest, MODEL, "default"));
                Map<String, String> unmet = new LinkedHashMap<>();
                try {
                    Await.until("every hostile listener dropped for its reason and tried again", WAIT, () -> {
                        assertTrue(node.isAlive(), "the node exited; its log ends:\n" + node.tail());
                        unmet.clear();
                        JsonArray workers = new JsonArray(http.get("/workers").body());
                        for (Attack a : attacks) {
                            List<String> errors = lastErrors(workers, a.instances());
                            List<String> wrong = errors.stream()
                                    .filter(e -> e == null || !e.contains(a.expected()))
                                    .toList();
                            if (a.peer().accepted() < 2 * a.instances().size()) {
                                unmet.put(a.name(), "accepted " + a.peer().accepted());
                            } else if (!wrong.isEmpty()) {
                                unmet.put(a.name(), "last_error " + wrong.get(0));
                            }
                        }
                        return unmet.isEmpty();
                    });
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + ": " + unmet + "; node log ends:\n" + node.tail(), e);
                }

                SyntheticPrompts prompts = SyntheticPrompts.standard(7, BLOCK);
                for (int i = 0; i < 40; i++) {
                    honest.submit(prompts.next());
                }
                IngestHarness.awaitIdle(honest);
                Set<HeldBlock> truth = IngestHarness.truth(honest);
                Await.until("the honest engine's blocks are exactly what it holds", WAIT, () -> {
                    assertTrue(node.isAlive(), "the node exited; its log ends:\n" + node.tail());
                    Set<HeldBlock> dumped = DumpBlocks.parse(http.get("/dump").body(), MODEL + ":default").stream()
                            .filter(b -> b.worker() == 1)
                            .collect(Collectors.toSet());
                    return dumped.equals(truth);
                });
                Await.until("each hostile replay ended, said so, and cost nothing else", WAIT, () -> {
                    JsonArray workers = new JsonArray(http.get("/workers").body());
                    return lastErrors(workers, List.of(80L, 81L)).stream()
                            .allMatch(e -> e != null && e.startsWith("Replay incomplete"));
                });
            } finally {
                flooding.interrupt();
                flooding.join(10_000);
                for (TestPublisher pub : gapped) {
                    pub.close();
                }
                for (ScriptedZmtpPeer r : replays) {
                    r.close();
                }
            }

            MetricsPage metrics = MetricsPage.of(http);
            double budget = metrics.value("kvindexer_network_memory_budget_bytes");
            double peak = metrics.value("kvindexer_network_memory_peak_bytes");
            assertTrue(peak <= budget, "peak " + peak + " over the budget " + budget);
            assertTrue(metrics.value("kvindexer_network_refused_total{port=\"zmq\"}") >= 1, "budget refusals counted");
            assertTrue(metrics.value("kvindexer_ingest_disconnects_total{reason=\"stalled\"}") >= 9);
            assertTrue(metrics.value("kvindexer_ingest_disconnects_total{reason=\"unread\"}") >= 1);
            assertTrue(
                    metrics.value("dynamo_kvrouter_kv_cache_events_applied{event_type=\"stored\",status=\"ok\"}")
                            > 1000,
                    "the flood's batches applied");
            assertEquals(
                    200, http.get("/ready").statusCode(), http.get("/ready").body());
            assertTrue(node.isAlive(), "the node exited; its log ends:\n" + node.tail());
            System.out.printf(
                    "hostile publishers: budget %.0f MiB, peak held %.1f MiB, node RSS %d MiB%n",
                    budget / MIB, peak / MIB, node.residentBytes() / MIB);
        } finally {
            for (Attack a : attacks) {
                a.peer().close();
            }
        }
    }

    private static Attack attack(String name, ScriptedZmtpPeer.Script script, long first, int count, String expected)
            throws Exception {
        List<Long> instances = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            instances.add(first + i);
        }
        return new Attack(name, new ScriptedZmtpPeer(script, true), instances, expected);
    }

    private static void register(HttpJson http, JsonObject body) {
        HttpResponse<String> r = http.post("/register", body.encode());
        assertEquals(201, r.statusCode(), "register " + body + ": " + r.body());
    }

    /** The last_error of each of {@code instances}' listeners, in order; null where a listener shows none. */
    private static List<String> lastErrors(JsonArray workers, List<Long> instances) {
        List<String> out = new ArrayList<>();
        for (long instance : instances) {
            String error = null;
            for (int i = 0; i < workers.size(); i++) {
                JsonObject w = workers.getJsonObject(i);
                if (DumpBlocks.u64(w.getValue("instance_id")) == instance) {
                    JsonObject l = w.getJsonObject("listeners").getJsonObject("0");
                    // Current while the listener is failed, previous once it connected again: either says why.
                    error = l.getString("last_error", l.getString("previous_error"));
                }
            }
            out.add(error);
        }
        return out;
    }

    /** A batch storing one block of hash {@code hash}. */
    private static byte[] storeBatch(long hash) {
        return BatchEncoder.batch(
                BatchEncoder.Format.VLLM_MAP,
                1.0,
                List.of(new EngineEvent.Store(new long[] {hash}, null, new int[BLOCK], BLOCK, null, null)),
                0);
    }

    private static Thread flood(TestPublisher pub) {
        SplittableRandom random = new SplittableRandom(3);
        long[] hashes = new long[256];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = 1_000_000 + i;
        }
        int[] tokens = random.ints(hashes.length * BLOCK, 0, 50_000).toArray();
        byte[] batch = BatchEncoder.batch(
                BatchEncoder.Format.VLLM_MAP,
                1.0,
                List.of(
                        new EngineEvent.Store(hashes, null, tokens, BLOCK, null, null),
                        new EngineEvent.Remove(hashes, null)),
                0);
        Thread t = new Thread(
                () -> {
                    for (long seq = 0; !Thread.currentThread().isInterrupted(); seq++) {
                        pub.publish("", seq, batch);
                    }
                },
                "flood");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
