package dev.kvindexer.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with --data-dir (docs/operations.md#data-directory): it writes its index and registrations, and a node
 * started on the same directory with no peer comes back with both, the engine replaying what it published meanwhile;
 * a damaged newest snapshot falls back to the older one; a directory it cannot write turns /ready 503 while queries
 * go on.
 */
class DataDirectoryTest {
    private static final int BLOCK = 16;

    @TempDir
    Path root;

    /** Inside {@link #root}, so what a test moves out of it is cleaned up too; the node creates it. */
    private Path dir;

    @BeforeEach
    void dataDir() {
        dir = root.resolve("data");
    }

    private ServeConfig config(Duration interval) {
        return ServeConfig.local(0).withDurability(DurabilityConfig.inDirectory(dir, interval));
    }

    private static void register(HttpJson http, SimulatedEngine e) {
        JsonObject body = new JsonObject()
                .put("instance_id", e.instanceId())
                .put("dp_rank", e.dpRank())
                .put("endpoint", e.endpoint())
                .put("replay_endpoint", e.replayEndpoint())
                .put("model_name", "m")
                .put("block_size", BLOCK);
        assertEquals(201, http.post("/register", body.encode()).statusCode());
    }

    private static int[] prompt(int seed, int blocks) {
        int[] tokens = new int[blocks * BLOCK];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = seed * 100_000 + i;
        }
        return tokens;
    }

    private static String query(int[] tokens) {
        return new JsonObject()
                .put("model_name", "m")
                .put(
                        "token_ids",
                        new JsonArray(java.util.Arrays.stream(tokens).boxed().toList()))
                .encode();
    }

    private static List<Path> snapshots(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".kvsnap"))
                    .sorted()
                    .toList();
        }
    }

    private static void awaitHeld(HttpJson http, SimulatedEngine e) throws InterruptedException {
        assertTrue(e.awaitIdle(Await.PATIENCE));
        Await.until(
                "the node holds what the engine holds", Await.PATIENCE, () -> heldOnNode(http) == e.heldDeviceBlocks());
    }

    /** The tokens of {@code tokens}' prefix that instance 11's rank 0 holds, as /query answers. */
    private static int matched(HttpJson http, int[] tokens) {
        JsonObject scores = new JsonObject(http.post("/query", query(tokens)).body()).getJsonObject("scores");
        JsonObject ranks = scores.getJsonObject("11");
        return ranks == null ? 0 : ranks.getInteger("0");
    }

    private static long heldOnNode(HttpJson http) {
        for (String line : http.get("/metrics").body().split("\n")) {
            if (line.startsWith("kvindexer_blocks{") && line.contains("tier=\"device\"")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return -1;
    }

    /** A node on the data directory takes {@code engine}'s blocks of {@code prompt}; returns its /dump, then stops. */
    private String serveAndStop(SimulatedEngine engine, int[] prompt) throws Exception {
        IndexerNode node = IndexerNode.start(config(Duration.ofHours(1)));
        try {
            HttpJson http = new HttpJson(node.httpPort());
            register(http, engine);
            assertTrue(engine.awaitSubscribers(1, Await.PATIENCE));
            engine.submit(prompt);
            awaitHeld(http, engine);
            return http.get("/dump").body();
        } finally {
            node.close();
        }
    }

    @Test
    void aRestartedNodeComesBackWithItsIndexAndTheEngineReplaysWhatItMissed() throws Exception {
        try (SimulatedEngine engine =
                SimulatedEngine.start(EngineConfig.local(11, 0).withReplayCapacity(1 << 16))) {
            int[] first = prompt(1, 8);
            String dumpBefore = serveAndStop(engine, first);
            assertEquals(1, snapshots(dir).size(), "the shutdown wrote one snapshot");

            // While no node runs, the engine goes on: a restarted node must replay this from the engine.
            int[] second = prompt(2, 5);
            engine.submit(second);
            assertTrue(engine.awaitIdle(Await.PATIENCE));

            IndexerNode b = IndexerNode.start(config(Duration.ofHours(1)));
            try {
                HttpJson http = new HttpJson(b.httpPort());
                assertEquals(200, http.get("/ready").statusCode());
                assertTrue(
                        b.recovery().peer().startsWith("data-dir "),
                        b.recovery().toString());
                JsonArray workers = new JsonArray(http.get("/workers").body());
                assertEquals(1, workers.size(), workers.encode());
                awaitHeld(http, engine);
                assertEquals(8 * BLOCK, matched(http, first), "the first prompt, from disk");
                assertEquals(5 * BLOCK, matched(http, second), "the second, replayed from the engine");
                assertNotEquals(dumpBefore, http.get("/dump").body());
                assertFalse(http.get("/workers").body().contains("\"exact\":false"));
            } finally {
                b.close();
            }
        }
    }

    @Test
    void aDamagedNewestSnapshotIsMovedAsideAndTheOlderOneLoads() throws Exception {
        try (SimulatedEngine engine =
                SimulatedEngine.start(EngineConfig.local(11, 0).withReplayCapacity(1 << 16))) {
            int[] first = prompt(3, 6);
            serveAndStop(engine, first);
            // A newer file whose last bytes were never written: a crash half-way that left no rename behind cannot
            // happen (the rename is atomic), but a disk can lose what it acknowledged.
            Path good = snapshots(dir).get(0);
            byte[] bytes = Files.readAllBytes(good);
            Path newer = dir.resolve("snapshot-00000000000000000002.kvsnap");
            Files.write(newer, java.util.Arrays.copyOf(bytes, bytes.length - 9));

            IndexerNode b = IndexerNode.start(config(Duration.ofHours(1)));
            try {
                HttpJson http = new HttpJson(b.httpPort());
                assertEquals(200, http.get("/ready").statusCode());
                assertEquals("data-dir " + good.getFileName(), b.recovery().peer());
                assertTrue(Files.exists(dir.resolve("rejected").resolve(newer.getFileName())));
                assertTrue(
                        http.get("/metrics").body().contains("kvindexer_snapshot_files_rejected_total 1"),
                        "the rejected file is counted");
                awaitHeld(http, engine);
                assertEquals(6 * BLOCK, matched(http, first));
            } finally {
                b.close();
            }
        }
    }

    @Test
    void aDirectoryItCannotWriteTurnsReadyDownWhileQueriesGoOn() throws Exception {
        IndexerNode node = IndexerNode.start(config(Duration.ofMillis(200)));
        try (SimulatedEngine engine = SimulatedEngine.start(EngineConfig.local(11, 0))) {
            HttpJson http = new HttpJson(node.httpPort());
            register(http, engine);
            Await.until("a first snapshot", Await.PATIENCE, () -> snapshotCount() > 0);
            // The directory becomes a file: every write fails, as on a full or read-only disk, even for root.
            // Moved away in one step: a write under way cannot put a file back.
            Files.move(dir, root.resolve("gone"));
            Files.writeString(dir, "not a directory");
            Await.until(
                    "/ready says why", Await.PATIENCE, () -> http.get("/ready").statusCode() == 503);
            assertTrue(http.get("/ready").body().contains("data directory " + dir + " not writable"));
            assertTrue(http.get("/metrics").body().contains("kvindexer_data_dir_writable 0"));
            assertEquals(200, http.post("/query", query(prompt(4, 2))).statusCode(), "queries are still answered");

            Files.delete(dir);
            Files.createDirectory(dir);
            Await.until(
                    "writable again", Await.PATIENCE, () -> http.get("/ready").statusCode() == 200);
            assertTrue(http.get("/metrics").body().contains("kvindexer_data_dir_writable 1"));
        } finally {
            node.close();
        }
    }

    private long snapshotCount() {
        try {
            return snapshots(dir).size();
        } catch (IOException e) {
            return 0;
        }
    }
}
