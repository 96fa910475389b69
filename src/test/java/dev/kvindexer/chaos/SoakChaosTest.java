package dev.kvindexer.chaos;

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
import dev.kvindexer.support.ChaosReport;
import dev.kvindexer.support.ChildJvm;
import dev.kvindexer.support.DumpBlocks;
import dev.kvindexer.support.HostileZmtpPublisher;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.Mutations;
import dev.kvindexer.support.TestPublisher;
import dev.kvindexer.wire.LiveFrames;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node in its own JVM, with the production JVM options and a 512 MiB heap, under everything at once for minutes:
 * honest engines that drop live batches (so replay runs all the time), queries, fuzzing publishers, a frame bomb that
 * reconnects every second, and hostile HTTP bodies. Its RSS is sampled throughout; at the end the honest engines'
 * blocks must be exactly in the index and nothing may have answered 5xx.
 */
@Tag("chaos")
// Chaos runs last as long as they are asked to (-Dkvindexer.chaos.minutes), far beyond the default test timeout.
@Timeout(value = 3, unit = TimeUnit.HOURS)
class SoakChaosTest {
    private static final String MODEL = "m";
    private static final int BLOCK = 16;
    private static final int ENGINES = 6;

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong fuzzMessages = new AtomicLong();
    private final AtomicLong queries = new AtomicLong();
    private final AtomicLong hostileRequests = new AtomicLong();
    private final AtomicLong serverErrors = new AtomicLong();
    private final AtomicLong prompts = new AtomicLong();

    @Test
    void minutesOfMixedHostileLoadLeaveTheNodeExactAndItsMemoryFlat() throws Exception {
        double minutes = ChaosReport.minutes(3);
        ChaosReport report = new ChaosReport("soak");
        int port = IngestHarness.freePorts(1)[0];
        List<String> jvm = new ArrayList<>(List.of("-XX:+ExitOnOutOfMemoryError", "-Xmx512m"));
        List<SimulatedEngine> engines = new ArrayList<>();
        List<Thread> load = new ArrayList<>();
        try (ChildJvm node = ChildJvm.start(
                        jvm,
                        "serve",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        Integer.toString(port),
                        "--threads",
                        "2",
                        "--ingest-threads",
                        "2",
                        "--max-event-bytes",
                        Integer.toString(1 << 20));
                TestPublisher fuzzA = new TestPublisher(0);
                TestPublisher fuzzB = new TestPublisher(0);
                HostileZmtpPublisher bomb = new HostileZmtpPublisher(1_500_000_000L)) {
            HttpJson http = new HttpJson(port);
            Await.until("the node is ready", Duration.ofSeconds(60), () -> status(http, "/ready") == 200);
            for (int i = 0; i < ENGINES; i++) {
                SimulatedEngine e = SimulatedEngine.start(EngineConfig.local(10 + i, 0)
                        .withCache(BLOCK, 1024, i % 2 == 0 ? 2048 : 0)
                        .withDrops(0.02, i));
                engines.add(e);
                assertEquals(
                        201,
                        http.post(
                                        "/register",
                                        RegisterClient.body(e, MODEL, "default").encode())
                                .statusCode());
                assertTrue(e.awaitSubscribers(1, Duration.ofSeconds(30)));
            }
            register(http, 101, fuzzA.endpoint());
            register(http, 102, fuzzB.endpoint());
            register(http, 201, bomb.endpoint());
            fuzzA.awaitSubscriber();
            fuzzB.awaitSubscriber();

            load.add(thread("engines", () -> drive(engines)));
            load.add(thread("fuzz-a", () -> fuzz(fuzzA, 1)));
            load.add(thread("fuzz-b", () -> fuzz(fuzzB, 2)));
            load.add(thread("queries", () -> query(http)));
            load.add(thread("hostile-http", () -> hostileHttp(http)));

            long end = System.nanoTime() + (long) (minutes * 60e9);
            long maxRss = 0;
            long firstRss = -1;
            long lastRss = -1;
            int samples = 0;
            int notReady = 0;
            while (System.nanoTime() < end) {
                LockSupport.parkNanos(Duration.ofSeconds(5).toNanos());
                assertTrue(node.process().isAlive(), "the node died:\n" + node.output());
                long rss = ChaosReport.rssBytes(node.process().pid());
                if (firstRss < 0 && System.nanoTime() > end - (long) (minutes * 60e9) + 30e9) {
                    firstRss = rss;
                }
                maxRss = Math.max(maxRss, rss);
                lastRss = rss;
                samples++;
                if (status(http, "/ready") != 200) {
                    notReady++;
                }
            }
            running.set(false);
            for (Thread t : load) {
                t.join(30_000);
            }
            for (SimulatedEngine e : engines) {
                assertTrue(e.awaitIdle(Duration.ofSeconds(60)));
            }
            for (long id : new long[] {101, 102, 201}) {
                assertEquals(
                        200,
                        http.post(
                                        "/unregister",
                                        new JsonObject()
                                                .put("instance_id", id)
                                                .put("model_name", MODEL)
                                                .encode())
                                .statusCode());
            }
            Set<HeldBlock> truth = new HashSet<>();
            engines.forEach(e -> truth.addAll(e.held()));
            Await.until(
                    "the honest engines' blocks are exactly in the index",
                    Duration.ofSeconds(60),
                    () -> DumpBlocks.parse(http.get("/dump").body(), MODEL + ":default")
                            .equals(truth));

            MetricsPage m = MetricsPage.of(http);
            long replays =
                    engines.stream().mapToLong(SimulatedEngine::replaysServed).sum();
            long dropped =
                    engines.stream().mapToLong(SimulatedEngine::droppedBatches).sum();
            long batches =
                    engines.stream().mapToLong(SimulatedEngine::totalBatches).sum();
            report.line(
                    "| run | %.1f min, node -Xmx512m, %d honest engines (2 %% live drops), 2 fuzzing publishers, "
                            + "1 frame bomb, query and hostile HTTP load |",
                    minutes, ENGINES);
            report.line(
                    "| honest engine batches / dropped live and replayed | %,d / %,d (replays served %,d) |",
                    batches, dropped, replays);
            report.line(
                    "| prompts / queries / hostile HTTP requests | %,d / %,d / %,d |",
                    prompts.get(), queries.get(), hostileRequests.get());
            report.line(
                    "| fuzzed ZMQ messages / frame bombs (connections) | %,d / %,d |",
                    fuzzMessages.get(), bomb.accepted());
            report.line(
                    "| decode errors frame / batch | %,.0f / %,.0f |",
                    m.value("kvindexer_decode_errors_total{kind=\"frame\"}"),
                    m.value("kvindexer_decode_errors_total{kind=\"batch\"}"));
            report.line("| 5xx answers | %d |", serverErrors.get());
            report.line("| ingest threads replaced | %.0f |", m.value("kvindexer_ingest_restarts_total"));
            report.line("| /ready not 200 | %d of %d samples |", notReady, samples);
            report.line(
                    "| RSS after 30 s / max / end | %d / %d / %d MiB |", firstRss >> 20, maxRss >> 20, lastRss >> 20);
            report.line("| final dump | equals the honest engines' %,d blocks exactly |", truth.size());
            assertEquals(0, serverErrors.get(), "no request may answer 5xx");
            assertEquals(0.0, m.value("kvindexer_ingest_restarts_total"));
            assertTrue(node.process().isAlive());
        } finally {
            running.set(false);
            engines.forEach(SimulatedEngine::close);
        }
    }

    private static void register(HttpJson http, long id, String endpoint) {
        assertEquals(
                201,
                http.post(
                                "/register",
                                new JsonObject()
                                        .put("instance_id", id)
                                        .put("endpoint", endpoint)
                                        .put("model_name", MODEL)
                                        .put("block_size", BLOCK)
                                        .encode())
                        .statusCode());
    }

    private static int status(HttpJson http, String path) {
        try {
            return http.get(path).statusCode();
        } catch (AssertionError | RuntimeException e) {
            // not answering yet, or no more: a status no server sends
            return -1;
        }
    }

    private Thread thread(String name, Runnable body) {
        Thread t = new Thread(body, "chaos-" + name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private void drive(List<SimulatedEngine> engines) {
        SyntheticPrompts source = SyntheticPrompts.standard(7, BLOCK);
        for (int i = 0; running.get(); i++) {
            engines.get(i % engines.size()).submit(source.next());
            prompts.incrementAndGet();
            LockSupport.parkNanos(2_000_000);
        }
    }

    private void fuzz(TestPublisher pub, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<byte[]> seeds = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            long[] hashes = rnd.longs(1 + rnd.nextInt(4)).toArray();
            seeds.add(BatchEncoder.batch(
                    BatchEncoder.Format.values()[i % 3],
                    1.0,
                    List.of(new EngineEvent.Store(
                            hashes,
                            null,
                            rnd.ints(hashes.length * BLOCK, 0, 50_000).toArray(),
                            BLOCK,
                            null,
                            null)),
                    0));
        }
        for (long seq = 0; running.get(); seq++) {
            pub.sendFrames(
                    new byte[0], LiveFrames.seqFrame(seq), Mutations.mutate(seeds.get(rnd.nextInt(seeds.size())), rnd));
            if (fuzzMessages.incrementAndGet() % 200 == 0) {
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    private void query(HttpJson http) {
        SyntheticPrompts source = SyntheticPrompts.standard(7, BLOCK);
        while (running.get()) {
            JsonObject body = new JsonObject()
                    .put("model_name", MODEL)
                    .put(
                            "token_ids",
                            new JsonArray(java.util.Arrays.stream(source.next())
                                    .boxed()
                                    .toList()));
            count(http.post("/query", body.encode()));
            queries.incrementAndGet();
        }
    }

    private void hostileHttp(HttpJson http) {
        byte[][] msgpack = {
            {(byte) 0xdd, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff},
            {(byte) 0xdd, 0x30, 0, 0, 0},
            {(byte) 0xc6, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff},
            nested(100_000)
        };
        String deepJson = "[".repeat(100_000);
        for (int i = 0; running.get(); i++) {
            byte[] body = msgpack[i % msgpack.length];
            String path = i % 2 == 0 ? "/query" : "/register";
            count(http.postBytes(path, body, "application/msgpack"));
            count(http.post(path, deepJson));
            count(http.post("/query", "{\"model_name\":\"m\\ud800\",\"token_ids\":[1]}"));
            hostileRequests.addAndGet(3);
            LockSupport.parkNanos(5_000_000);
        }
    }

    private static byte[] nested(int depth) {
        byte[] b = new byte[depth];
        java.util.Arrays.fill(b, (byte) 0x91);
        return b;
    }

    private void count(HttpResponse<?> r) {
        if (r.statusCode() >= 500) {
            serverErrors.incrementAndGet();
            System.out.println("5xx: " + r.statusCode() + " " + r.uri());
        }
    }
}
