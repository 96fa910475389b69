package dev.kvindexer.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.EngineTraffic;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data directory end to end (docs/operations.md#data-directory): simulated engines with replay rings and live
 * drops publish into a reference node that never stops and into nodes in JVMs of their own that keep a --data-dir;
 * those are killed (SIGKILL, so only their periodic snapshots exist) or stopped (SIGTERM) while the engines publish,
 * and started again on their directories with no live peer. Their /dump, as block sets, must then equal the
 * reference's, except for the streams whose engine ring no longer held the gap, which must say so and hold
 * everything published after the restart.
 */
class DurableIndexEndToEndTest {
    private static final Duration START = ChildNode.START_PATIENCE;
    /**
     * Holds far more than an engine publishes from the last snapshot until a node is back (the few published slowly
     * until the kill, then {@value #AWAY} at most), so every gap can be replayed, but less than it published before: a
     * node that came back empty could not rebuild the index from the engines, only one that loaded its data directory
     * can.
     */
    private static final int RING = 128;
    /** Far less than what is published while a node is down. */
    private static final int SHORT_RING = 8;
    /** Batches an engine publishes at most from the kill until the node is back. */
    private static final int AWAY = 60;
    /**
     * Prompts an engine publishes at most from the moment the test starts waiting for the last snapshot until the
     * kill: on a loaded machine that wait can last many seconds, and what is published meanwhile must stay replayable.
     */
    private static final int NEAR_KILL = 5;

    private static final double DROPS = 0.02;
    /** Builds the history quickly. */
    private static final Duration FAST = Duration.ofMillis(2);
    /**
     * Around a crash: little is published between the last snapshot and the kill, and what is left of {@link #AWAY}
     * trickles on through the restart, so that live batches meet the node's recovery.
     */
    private static final Duration SLOW = Duration.ofMillis(50);

    private final ClusterFixture fixture = new ClusterFixture();
    private final List<ChildNode> children = new ArrayList<>();
    private IndexerNode reference;

    @TempDir
    Path tmp;

    @BeforeEach
    void startReference() throws Exception {
        reference = IndexerNode.start(ServeConfig.local(0));
    }

    @AfterEach
    void stop() {
        children.forEach(ChildNode::close);
        if (reference != null) {
            reference.close();
        }
        fixture.close();
    }

    /**
     * Both nodes of a cluster SIGKILLed while engines publish and drop live batches, the engines publishing on while
     * no node runs, then both started again at once on their data directories: a node that finds no ready peer loads
     * its newest snapshot and replays the rest from the engines. Both end up holding exactly what the reference holds.
     */
    @Test
    void aWholeClusterKilledUnderLoadComesBackFromDiskExactlyAsANodeThatNeverStopped() throws Exception {
        List<SimulatedEngine> engines = engines(100, 3, RING, DROPS);
        Path dirA = tmp.resolve("a");
        Path dirB = tmp.resolve("b");
        try (ClusterNodes cluster = new ClusterNodes()) {
            ChildNode a = child("a", dirA, cluster.childFlags(), 1);
            ChildNode b = child("b", dirB, cluster.childFlags(), 1);
            int portA = a.awaitReady(START);
            b.awaitReady(START);
            register(engines, reference.httpPort(), portA);
            for (SimulatedEngine e : engines) {
                ClusterFixture.awaitSubscribers(e, 3);
            }

            int[] restarted;
            try (EngineTraffic traffic = EngineTraffic.start(engines, SyntheticPrompts.standard(100, 16), FAST)) {
                awaitHistoryBeyondRing(engines);
                nearKill(traffic, engines, portA);
                awaitNewSnapshot(dirA);
                awaitNewSnapshot(dirB);
                a.kill();
                b.kill();
                down(traffic);
                traffic.awaitBatches("traffic while no node runs", 10);
                traffic.pace(SLOW);
                ChildNode a2 = child("a-restarted", dirA, cluster.childFlags(), 1);
                ChildNode b2 = child("b-restarted", dirB, cluster.childFlags(), 1);
                restarted = new int[] {a2.awaitReady(START), b2.awaitReady(START)};
                back(traffic);
                traffic.awaitBatches("traffic after the restart", 30);
            }

            Set<HeldBlock> expected = referenceBlocks(engines);
            int fromDisk = 0;
            for (int port : restarted) {
                fixture.awaitBlocks("node " + port + " holds what the reference holds", port, expected, this::logs);
                assertExactAndReady(port);
                fromDisk += recoveredFrom(port).startsWith("data-dir ") ? 1 : 0;
            }
            // The first node to open its gate found no ready peer; the other may have recovered from it.
            assertTrue(fromDisk >= 1, "a restarted node loaded its data directory" + logs());
            assertTrue(
                    engines.stream().mapToLong(SimulatedEngine::droppedBatches).sum() > 0, "live batches dropped");
            report(engines, restarted);
        }
    }

    /**
     * As above with one standalone node, but half the engines keep only {@value #SHORT_RING} batches and publish far
     * more than that while the node is down: their streams come back inexact (and say so in /workers and /metrics),
     * with everything published after the restart; the other engines' streams come back exactly as the reference
     * holds them, that of an engine restarted while the node was down included (its old process's blocks fenced).
     */
    @Test
    void streamsWhoseGapOutgrewTheEngineRingComeBackInexactAndNothingElseIsWrong() throws Exception {
        List<SimulatedEngine> shortRings = engines(200, 2, SHORT_RING, 0);
        List<SimulatedEngine> largeRings = engines(210, 2, RING, DROPS);
        SimulatedEngine restartedEngine = largeRings.get(0);
        List<SimulatedEngine> engines = new ArrayList<>(shortRings);
        engines.addAll(largeRings);
        Path dir = tmp.resolve("node");
        ChildNode node = child("node", dir, List.of(), 1);
        int nodePort = node.awaitReady(START);
        register(engines, reference.httpPort(), nodePort);
        for (SimulatedEngine e : engines) {
            ClusterFixture.awaitSubscribers(e, 2);
        }

        int port;
        try (EngineTraffic traffic = EngineTraffic.start(engines, SyntheticPrompts.standard(200, 16), FAST)) {
            awaitHistoryBeyondRing(engines);
            nearKill(traffic, engines, nodePort);
            awaitNewSnapshot(dir);
            node.kill();
            down(traffic);
            // A new engine process while the node is away: seq starts over below the snapshot's watermark.
            restartedEngine.restart();
            traffic.awaitBatches("traffic while the node is down", 3L * SHORT_RING);
            traffic.pace(SLOW);
            port = child("node-restarted", dir, List.of(), 1).awaitReady(START);
        }
        // Published once the node runs again: every engine's tail must be indexed, exact stream or not. Prompts of
        // their own, so no block of the tail hangs off one published in the gap.
        SyntheticPrompts fresh = new SyntheticPrompts(201, 16, 1, 0, 4, 16);
        List<Set<HeldBlock>> tails = new ArrayList<>();
        for (SimulatedEngine e : engines) {
            Set<HeldBlock> before = e.held();
            for (int i = 0; i < 3; i++) {
                e.submit(fresh.next());
            }
            EngineTraffic.endLive(e, fresh);
            Set<HeldBlock> tail = new HashSet<>(e.held());
            tail.removeAll(before);
            assertFalse(tail.isEmpty());
            tails.add(tail);
        }

        Set<HeldBlock> expected = referenceBlocks(engines);
        for (int i = 0; i < engines.size(); i++) {
            long worker = engines.get(i).instanceId();
            if (largeRings.contains(engines.get(i))) {
                fixture.awaitWorkerBlocks(
                        "worker " + worker + " as the reference holds it", port, worker, expected, this::logs);
            } else {
                fixture.awaitBlocksInclude("the tail of inexact worker " + worker, port, tails.get(i), this::logs);
            }
        }
        assertTrue(
                fixture.blocks(port).stream()
                        .allMatch(b -> engines.stream().anyMatch(e -> e.instanceId() == b.worker())),
                "no block of an engine that was never registered");

        JsonArray workers = new JsonArray(fixture.workers(port));
        assertEquals(engines.size(), workers.size(), workers.encode());
        for (SimulatedEngine e : engines) {
            JsonObject rank = listener(workers, e.instanceId());
            if (shortRings.contains(e)) {
                assertEquals(false, rank.getBoolean("exact"), rank.encode());
                assertTrue(rank.getLong("lost_batches") > 0, rank.encode());
            } else {
                assertFalse(rank.containsKey("exact"), rank.encode());
            }
        }
        assertEquals(
                shortRings.size(),
                (int) MetricsPage.of(fixture.http(port)).value("kvindexer_inexact_streams"),
                "inexact streams");
        assertEquals(200, fixture.http(port).get("/ready").statusCode(), "an inexact stream does not make it unready");
        assertTrue(recoveredFrom(port).startsWith("data-dir "), recoveredFrom(port));
        report(engines, port);
    }

    /**
     * SIGTERM: the shutdown hook writes a final snapshot holding everything the node applied, so the node started
     * again holds what the reference holds without a single batch replayed. The periodic snapshot never comes
     * around in this test: the final one is the only file.
     */
    @Test
    void aNodeStoppedGracefullyComesBackFromItsFinalSnapshotAloneWithoutReplay() throws Exception {
        List<SimulatedEngine> engines = engines(300, 3, RING, DROPS);
        Path dir = tmp.resolve("node");
        ChildNode node = child("node", dir, List.of(), 3600);
        int port = node.awaitReady(START);
        register(engines, reference.httpPort(), port);
        for (SimulatedEngine e : engines) {
            ClusterFixture.awaitSubscribers(e, 2);
        }
        try (EngineTraffic traffic = EngineTraffic.start(engines, SyntheticPrompts.standard(300, 16), FAST)) {
            traffic.awaitBatches("traffic", 100);
        }
        Set<HeldBlock> expected = referenceBlocks(engines);
        fixture.awaitBlocks("the node holds what the reference holds", port, expected, this::logs);

        long replayed = replayedBatches(engines);
        node.terminate(START);
        assertEquals(1, snapshots(dir).size(), "the shutdown's snapshot, and no periodic one");
        int again = child("node-restarted", dir, List.of(), 3600).awaitReady(START);
        fixture.awaitBlocks("the restarted node holds what the reference holds", again, expected, this::logs);
        assertEquals(replayed, replayedBatches(engines), "no batch was replayed: the final snapshot held them all");
        assertExactAndReady(again);
        assertTrue(recoveredFrom(again).startsWith("data-dir "), recoveredFrom(again));
        report(engines, again);
    }

    // ---- helpers ----

    private List<SimulatedEngine> engines(long firstId, int n, int ring, double drops) {
        List<SimulatedEngine> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(fixture.engine(
                    EngineConfig.local(firstId + i, 0).withReplayCapacity(ring).withDrops(drops, firstId + i)));
        }
        return out;
    }

    /** Waits until no engine's ring holds its first batch any more: only a snapshot has what came before. */
    private static void awaitHistoryBeyondRing(List<SimulatedEngine> engines) {
        Await.until(
                "engines published more than their rings hold",
                Await.PATIENCE,
                () -> engines.stream().allMatch(e -> e.generationBatches() > RING));
    }

    /**
     * Before the last snapshot and the kill: a few more prompts, slowly ({@value #NEAR_KILL} an engine), then the
     * node on {@code port} catches up with all the engines published. A node on a loaded machine lags its engines;
     * a snapshot it took while behind would leave more to replay than the rings hold, and a watermark low enough for
     * an engine restarted meanwhile to publish past it unnoticed.
     */
    private void nearKill(EngineTraffic traffic, List<SimulatedEngine> engines, int port) throws Exception {
        traffic.pace(SLOW);
        traffic.limit(NEAR_KILL);
        traffic.awaitLimit("the traffic before the kill");
        // A batch the drop schedule lost is noticed with the next one: each engine's last goes out live.
        SyntheticPrompts last = SyntheticPrompts.standard(9, 16);
        for (SimulatedEngine e : engines) {
            EngineTraffic.endLive(e, last);
        }
        fixture.awaitBlocks(
                "the node caught up before the kill",
                port,
                ClusterFixture.truth(engines.toArray(SimulatedEngine[]::new)),
                this::logs);
    }

    /**
     * From the kill until the node is back the engines publish at most {@value #AWAY} batches each, so what their
     * rings must replay stays within them however long the restart takes; fast at first, while no node runs. Set once
     * the kill is done: however long that takes, the budget is still there for the traffic the test waits for next.
     */
    private static void down(EngineTraffic traffic) {
        traffic.limit(AWAY);
        traffic.pace(FAST);
    }

    /** The node is back: the engines publish as before. */
    private static void back(EngineTraffic traffic) {
        traffic.unlimited();
        traffic.pace(FAST);
    }

    /** A node in a JVM of its own keeping {@code dataDir}, snapshotting every {@code intervalSeconds}. */
    private ChildNode child(String name, Path dataDir, List<String> flags, int intervalSeconds) {
        List<String> args = new ArrayList<>(flags);
        args.addAll(List.of(
                "--threads",
                "2",
                "--ingest-threads",
                "1",
                "--data-dir",
                dataDir.toString(),
                "--snapshot-interval",
                Integer.toString(intervalSeconds)));
        ChildNode c = ChildNode.start(tmp, name, args);
        children.add(c);
        return c;
    }

    private void register(List<SimulatedEngine> engines, int referencePort, int nodePort) {
        for (SimulatedEngine e : engines) {
            fixture.register(referencePort, e);
            fixture.register(nodePort, e);
        }
    }

    /** What the reference holds once it holds exactly what the engines hold (it never stopped, so it must). */
    private Set<HeldBlock> referenceBlocks(List<SimulatedEngine> engines) {
        Set<HeldBlock> truth = ClusterFixture.truth(engines.toArray(new SimulatedEngine[0]));
        assertFalse(truth.isEmpty());
        fixture.awaitBlocks("the reference holds what the engines hold", reference.httpPort(), truth, () -> "");
        assertFalse(fixture.workers(reference.httpPort()).contains("\"exact\":false"), "the reference is exact");
        return truth;
    }

    private static JsonObject listener(JsonArray workers, long instanceId) {
        for (int i = 0; i < workers.size(); i++) {
            JsonObject w = workers.getJsonObject(i);
            if (w.getLong("instance_id") == instanceId) {
                return w.getJsonObject("listeners").getJsonObject("0");
            }
        }
        throw new AssertionError("no worker " + instanceId + " in " + workers.encode());
    }

    /**
     * Every stream exact, no replay that fell short (a catch-up included) unless a peer's exact copy repaired it, and
     * ready. On a loaded machine the last snapshot before the kill may be older than an engine's ring holds; the
     * node that started second then repairs the hole from the first, which is exact too.
     */
    private void assertExactAndReady(int port) {
        String workers = fixture.workers(port);
        assertFalse(workers.contains("\"exact\""), workers);
        JsonArray listed = new JsonArray(workers);
        for (int i = 0; i < listed.size(); i++) {
            JsonObject l = listed.getJsonObject(i).getJsonObject("listeners").getJsonObject("0");
            String error = l.getString("last_error");
            assertTrue(error == null || error.contains("repaired from peer"), workers);
        }
        assertEquals(0, MetricsPage.of(fixture.http(port)).value("kvindexer_inexact_streams"));
        assertEquals(200, fixture.http(port).get("/ready").statusCode());
    }

    /** Where the node on {@code port} recovered from at startup (/overview), or "" when it started empty. */
    private String recoveredFrom(int port) {
        JsonObject overview = new JsonObject(fixture.http(port).get("/overview").body());
        String peer =
                overview.getJsonObject("cluster").getJsonObject("recovery").getString("peer");
        return peer == null ? "" : peer;
    }

    private static long replayedBatches(List<SimulatedEngine> engines) {
        return engines.stream().mapToLong(SimulatedEngine::replayedBatches).sum();
    }

    /** Waits for a snapshot that appears after now: the node took it after everything the test did so far. */
    private static void awaitNewSnapshot(Path dir) throws IOException {
        List<Path> before = snapshots(dir);
        Await.until("a new snapshot in " + dir, Await.PATIENCE, () -> {
            try {
                return snapshots(dir).stream().anyMatch(p -> !before.contains(p));
            } catch (IOException e) {
                return false;
            }
        });
    }

    private static List<Path> snapshots(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".kvsnap"))
                    .sorted()
                    .toList();
        }
    }

    /** What the run did, in the test's output file: enough to tell a run that proved little. */
    private void report(List<SimulatedEngine> engines, int... ports) {
        for (SimulatedEngine e : engines) {
            System.out.printf(
                    "engine %d: %d batches, %d dropped live, %d replayed%n",
                    e.instanceId(), e.totalBatches(), e.droppedBatches(), e.replayedBatches());
        }
        for (int port : ports) {
            System.out.printf(
                    "node %d recovered from %s; /workers %s%n", port, recoveredFrom(port), fixture.workers(port));
        }
    }

    private String logs() {
        StringBuilder sb = new StringBuilder();
        children.forEach(c -> sb.append("\n--- child log:\n").append(c.tail()));
        return sb.toString();
    }
}
