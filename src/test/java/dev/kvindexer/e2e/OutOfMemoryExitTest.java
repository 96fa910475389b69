package dev.kvindexer.e2e;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.ChildJvm;
import dev.kvindexer.support.IngestHarness;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A node whose heap is exhausted, started with the JVM options the container image and the README give it, exits
 * with a failure status, so its supervisor starts a new one, instead of lingering with dead threads, a closed HTTP
 * port and a shutdown that never completes.
 */
class OutOfMemoryExitTest {
    private static final int BLOCK = 16;
    private static final int BLOCKS_PER_EVENT = 128;

    /** The JVM options of the Dockerfile's exec-form ENTRYPOINT: everything between "java" and "-jar". */
    static List<String> productionJvmOptions() throws IOException {
        String entrypoint = Files.readAllLines(Path.of("Dockerfile")).stream()
                .filter(l -> l.startsWith("ENTRYPOINT "))
                .findFirst()
                .orElseThrow();
        JsonArray exec = new JsonArray(entrypoint.substring("ENTRYPOINT ".length()));
        List<String> options = new ArrayList<>();
        for (int i = 1; i < exec.size() && !exec.getString(i).equals("-jar"); i++) {
            options.add(exec.getString(i));
        }
        return options;
    }

    @Test
    void theReadmeProductionCommandUsesTheImagesFatalErrorOption() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        assertTrue(productionJvmOptions().contains("-XX:+ExitOnOutOfMemoryError"), "the image's options");
        assertTrue(readme.contains("java -XX:+ExitOnOutOfMemoryError"), "the README's production command");
    }

    /**
     * What the network sends is bounded, and so is the index by default: only an index allowed the whole heap
     * ({@code --max-index-memory 100%}) lets a flood of distinct blocks reach the end of it.
     */
    @Test
    void aStoreFloodThatExhaustsTheHeapEndsTheProcessWithAFailureStatus() throws Exception {
        int port = IngestHarness.freePorts(1)[0];
        List<String> jvm = new ArrayList<>(productionJvmOptions());
        jvm.add("-Xmx64m");
        try (TestPublisher engine = new TestPublisher();
                ChildJvm node = ChildJvm.start(
                        jvm,
                        "serve",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        Integer.toString(port),
                        "--threads",
                        "1",
                        "--ingest-threads",
                        "1",
                        "--block-size",
                        Integer.toString(BLOCK),
                        "--max-index-memory",
                        "100%",
                        "--workers",
                        "1=" + engine.endpoint())) {
            engine.awaitSubscriber();
            SplittableRandom random = new SplittableRandom(15);
            long hash = 1;
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            for (long seq = 0; node.process().isAlive() && System.nanoTime() < deadline; seq++) {
                long[] hashes = new long[BLOCKS_PER_EVENT];
                for (int i = 0; i < hashes.length; i++) {
                    hashes[i] = hash++;
                }
                int[] tokens = random.ints(BLOCKS_PER_EVENT * BLOCK, 0, 100_000).toArray();
                engine.publish(
                        "",
                        seq,
                        BatchEncoder.batch(
                                BatchEncoder.Format.VLLM_MAP,
                                seq,
                                List.of(new EngineEvent.Store(hashes, null, tokens, BLOCK, null, null)),
                                0));
            }
            Integer status = node.awaitExit(Duration.ofSeconds(30));
            assertNotNull(status, "the node still runs after its heap filled:\n" + tail(node.output()));
            assertNotEquals(0, status, tail(node.output()));
        }
    }

    private static String tail(String s) {
        return s.length() <= 4000 ? s : s.substring(s.length() - 4000);
    }
}
