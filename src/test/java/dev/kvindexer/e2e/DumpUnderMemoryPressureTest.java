package dev.kvindexer.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /dump} of a node whose index sits at its memory budget, at -Xmx256m with the production option that ends
 * the process on an OutOfMemoryError, while writers keep sending: the JSON and the binary dump are each answered
 * whole, in bounded memory (or 503 with Retry-After when the node cannot hold the snapshot), and the node lives.
 */
class DumpUnderMemoryPressureTest {
    private static final int BLOCK = 16;
    private static final int BACKENDS = 4;
    private static final int HASHES_PER_EVENT = 2000;
    private static final Duration WAIT = Duration.ofSeconds(120);

    @TempDir
    Path logs;

    @Test
    void aDumpOfAFullIndexIsAnsweredWhileWritersGoOn() throws Exception {
        List<String> jvm = new ArrayList<>(ChildNode.SMALL_JVM);
        jvm.add("-XX:+ExitOnOutOfMemoryError");
        try (Socket unreachable = FreePort.reserve();
                ChildNode node =
                        ChildNode.start(logs, "dump", jvm, List.of("--max-index-memory", "64m", "--threads", "2"))) {
            HttpJson http = new HttpJson(node.awaitReady(ChildNode.START_PATIENCE));
            for (int b = 0; b < BACKENDS; b++) {
                JsonObject register = new JsonObject()
                        .put("endpoint", "tcp://127.0.0.1:" + unreachable.getLocalPort())
                        .put("type", "vLLM")
                        .put("modelname", "m")
                        .put("instance_id", "backend-" + b)
                        .put("block_size", BLOCK);
                assertEquals(200, http.post("/register", register.encode()).statusCode());
            }
            AtomicBoolean writing = new AtomicBoolean(true);
            AtomicLong stored = new AtomicLong();
            List<Thread> writers = new ArrayList<>();
            for (int b = 0; b < BACKENDS; b++) {
                writers.add(writer(http, b, writing, stored));
            }
            try {
                Await.until("the index at its budget", WAIT, () -> {
                    assertTrue(node.isAlive(), "the node exited while filling; its log ends:\n" + node.tail());
                    return MetricsPage.of(http).value("kvindexer_index_evicted_blocks_total") > 0;
                });
                assertTrue(stored.get() > 500_000, "blocks sent: " + stored.get());
                assertDumped(http, node, false);
                assertDumped(http, node, true);
            } finally {
                writing.set(false);
                for (Thread t : writers) {
                    t.join(30_000);
                }
            }
            assertTrue(node.isAlive(), "the node exited; its log ends:\n" + node.tail());
            MetricsPage metrics = MetricsPage.of(http);
            assertTrue(metrics.value("kvindexer_index_memory_used_bytes")
                    <= metrics.value("kvindexer_index_memory_budget_bytes") * 1.05);
            System.out.printf(
                    "dump under memory pressure: %d blocks sent, node RSS %d MiB%n",
                    stored.get(), node.residentBytes() >> 20);
        }
    }

    /** A whole dump read as a slow client would, or a 503 that says when to come back; the node stays up. */
    private static void assertDumped(HttpJson http, ChildNode node, boolean binary) throws Exception {
        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(http.base() + "/dump")).timeout(WAIT);
        if (binary) {
            request.header("accept", SnapshotWriter.MEDIA_TYPE);
        }
        HttpResponse<InputStream> r = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        if (r.statusCode() == 503) {
            assertNotNull(r.headers().firstValue("retry-after").orElse(null), "503 without Retry-After");
            r.body().close();
            return;
        }
        assertEquals(200, r.statusCode());
        long total = 0;
        byte[] buf = new byte[64 * 1024];
        byte last = 0;
        try (InputStream in = r.body()) {
            for (int n; (n = in.read(buf)) > 0; ) {
                total += n;
                last = buf[n - 1];
            }
        }
        assertTrue(node.isAlive(), "the node exited during the dump; its log ends:\n" + node.tail());
        assertTrue(total > 1 << 20, (binary ? "binary" : "JSON") + " dump of " + total + " bytes");
        if (!binary) {
            assertEquals('}', (char) last, "the JSON dump ends its document");
        }
    }

    /** Stores runs of random sequence hashes, without tokens, for backend {@code b} until told to stop. */
    private static Thread writer(HttpJson http, int b, AtomicBoolean writing, AtomicLong stored) {
        Thread t = new Thread(
                () -> {
                    SplittableRandom random = new SplittableRandom(b);
                    for (long id = 0; writing.get(); id++) {
                        JsonArray hashes = new JsonArray();
                        for (int i = 0; i < HASHES_PER_EVENT; i++) {
                            hashes.add(new BigInteger(Long.toUnsignedString(random.nextLong())));
                        }
                        JsonObject event = new JsonObject()
                                .put("event_id", id)
                                .put("timestamp", 1739145600000L)
                                .put("event_type", "stored")
                                .put("model_name", "m")
                                .put("block_size", BLOCK)
                                .put("tenant_id", "default")
                                .put("backend_id", "backend-" + b)
                                .put("medium", "gpu")
                                .put("dp_rank", 0)
                                .put("seq_hashes", hashes)
                                .put("base_block_idx", 0)
                                .put("parent_hash", null)
                                .put("token_ids", null);
                        try {
                            HttpResponse<String> r = http.post(
                                    "/events",
                                    new JsonObject()
                                            .put("events", new JsonArray().add(event))
                                            .encode());
                            if (r.statusCode() == 200) {
                                stored.addAndGet(HASHES_PER_EVENT);
                            }
                        } catch (RuntimeException e) {
                            // the node is gone or busy: the test's own checks say which
                        }
                    }
                },
                "events-writer-" + b);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
