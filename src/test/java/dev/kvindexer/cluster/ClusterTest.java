package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Replicas in a real Hazelcast cluster (members in this JVM on loopback, a random cluster name per test) with
 * simulated engines speaking the real ZMQ protocol: cluster-wide registrations, any node answering, nodes leaving
 * and joining, and exact recovery of a node that joins while engines publish.
 */
class ClusterTest {
    private static final String MODEL = ClusterFixture.MODEL;
    private static final String PARTITION = ClusterFixture.PARTITION;
    private static final int BLOCK = ClusterFixture.BLOCK;
    private static final Duration WAIT = ClusterFixture.WAIT;
    private static final int RING = 256;

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();

    @AfterEach
    void stop() {
        fixture.close();
        cluster.close();
    }

    private SimulatedEngine engine(long instanceId) {
        return fixture.engine(instanceId);
    }

    private SimulatedEngine engine(EngineConfig base) {
        return fixture.engine(base);
    }

    private HttpJson http(IndexerNode node) {
        return fixture.http(node.httpPort());
    }

    private void register(IndexerNode via, SimulatedEngine e) {
        fixture.register(via.httpPort(), e);
    }

    private static void awaitSubscribers(SimulatedEngine e, long n) throws InterruptedException {
        ClusterFixture.awaitSubscribers(e, n);
    }

    private static void awaitIdle(SimulatedEngine... of) throws InterruptedException {
        ClusterFixture.awaitIdle(of);
    }

    private static Set<HeldBlock> truth(SimulatedEngine... of) {
        return ClusterFixture.truth(of);
    }

    private JsonObject dump(IndexerNode node) {
        HttpResponse<String> r = http(node).get("/dump");
        assertEquals(200, r.statusCode(), r.body());
        return new JsonObject(r.body());
    }

    private Set<HeldBlock> blocks(IndexerNode node) {
        return fixture.blocks(node.httpPort());
    }

    /** Waits until a node holds exactly {@code expected}. */
    private void awaitBlocks(String what, IndexerNode node, Set<HeldBlock> expected) {
        fixture.awaitBlocks(
                what,
                node.httpPort(),
                expected,
                () -> "\nwarnings: " + node.counters().warningSnapshot());
    }

    /** The stream watermarks of a node's partition (our exact-snapshot extension of /dump). */
    private JsonArray watermarks(IndexerNode node) {
        JsonObject p = dump(node).getJsonObject(PARTITION);
        return p == null ? new JsonArray() : p.getJsonArray("watermarks");
    }

    private String query(IndexerNode node, int[] prompt) {
        HttpResponse<String> r = fixture.query(node.httpPort(), prompt);
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    private int workerCount(IndexerNode node) {
        return fixture.workerCount(node.httpPort());
    }

    @Test
    void registrationsApplyOnEveryNodeAndANodeThatLeavesAndReturnsRecovers() throws Exception {
        IndexerNode n1 = cluster.start();
        IndexerNode n2 = cluster.start();
        IndexerNode n3 = cluster.start();
        SimulatedEngine a = engine(101);
        SimulatedEngine b = engine(102);

        register(n1, a);
        register(n2, b);
        for (IndexerNode n : List.of(n1, n2, n3)) {
            assertEquals(2, workerCount(n), "/register answers once every node has applied it");
        }
        awaitSubscribers(a, 3);
        awaitSubscribers(b, 3);
        JsonArray peersOf1 = new JsonArray(http(n1).get("/peers").body());
        assertTrue(
                peersOf1.contains("http://127.0.0.1:" + n2.httpPort())
                        && peersOf1.contains("http://127.0.0.1:" + n3.httpPort()),
                "node 1 discovered nodes 2 and 3: " + peersOf1);

        SyntheticPrompts prompts = SyntheticPrompts.standard(7, BLOCK);
        int[] last = null;
        for (int i = 0; i < 40; i++) {
            last = prompts.next();
            (i % 2 == 0 ? a : b).submit(last);
        }
        awaitIdle(a, b);
        awaitBlocks("node 3 holds what the engines hold", n3, truth(a, b));
        String answer = query(n3, last);
        assertTrue(
                answer.contains("\"" + (last == null ? 0 : 102) + "\":{\"0\":"), "node 3 scores engine b: " + answer);
        assertEquals(query(n1, last), answer, "any node gives the same answer");

        cluster.stop(n2);
        Await.until(
                "node 1 no longer lists node 2",
                WAIT,
                () -> !http(n1).get("/peers").body().contains(":" + n2.httpPort() + "\""));
        for (int i = 0; i < 40; i++) {
            (i % 2 == 0 ? a : b).submit(prompts.next());
        }
        awaitIdle(a, b);
        awaitBlocks("node 1 keeps following the engines", n1, truth(a, b));
        awaitBlocks("node 3 keeps following the engines", n3, truth(a, b));
        assertEquals(2, workerCount(n3), "registrations survive a node leaving");

        long subscriptionsA = a.subscriptions();
        IndexerNode back = cluster.start();
        assertEquals(2, workerCount(back), "the returning node subscribed to every registered worker");
        assertTrue(a.subscriptions() > subscriptionsA);
        assertTrue(
                back.recovery().exact() && back.recovery().events() > 0, "recovered from a peer: " + back.recovery());
        MetricsPage metrics = MetricsPage.of(http(back));
        assertEquals(back.recovery().events(), metrics.value("kvindexer_recovered_events"));
        assertEquals(1, metrics.value("kvindexer_recovery_exact"), "a kvindexer peer's snapshot is exact");
        assertEquals(1, metrics.value("kvindexer_ready"));
        assertEquals(back.recovery().millis() / 1000.0, metrics.value("kvindexer_recovery_duration_seconds"), 1e-9);
        assertEquals(3, metrics.value("kvindexer_cluster_members"));
        awaitBlocks("the returning node recovered everything", back, blocks(n1));
        assertEquals(watermarks(n1), watermarks(back), "and resumes every stream where node 1 is");
        assertEquals(0, back.counters().warningCount(WarningKind.ENGINE_RESTART));

        HttpResponse<String> unregister = http(n3).post("/unregister", "{\"instance_id\":101,\"model_name\":\"m\"}");
        assertEquals(200, unregister.statusCode(), unregister.body());
        for (IndexerNode n : List.of(n1, back, n3)) {
            assertEquals(1, workerCount(n), "/unregister answers once every node has applied it");
            assertTrue(blocks(n).stream().noneMatch(h -> h.worker() == 101), "with the worker's blocks");
        }
    }

    @Test
    void conflictsAreRefusedOnAnyNodeAndChangeNothing() throws Exception {
        IndexerNode n1 = cluster.start();
        IndexerNode n2 = cluster.start();
        SimulatedEngine a = engine(201);
        register(n1, a);
        assertEquals(1, workerCount(n2));

        HttpResponse<String> twice = http(n2).post(
                        "/register", RegisterClient.body(a, MODEL, "default").encode());
        assertEquals(409, twice.statusCode());
        assertEquals("{\"error\":\"instance 201 dp_rank 0 already registered\"}", twice.body());
        JsonObject otherBlockSize =
                RegisterClient.body(engine(202), MODEL, "default").put("block_size", 32);
        HttpResponse<String> mismatch = http(n2).post("/register", otherBlockSize.encode());
        assertEquals(409, mismatch.statusCode(), mismatch.body());
        HttpResponse<String> unknown = http(n2).post("/unregister", "{\"instance_id\":999,\"model_name\":\"m\"}");
        assertEquals(404, unknown.statusCode());

        for (IndexerNode n : List.of(n1, n2)) {
            assertEquals(1, workerCount(n));
            assertTrue(http(n).get("/workers").body().contains("\"instance_id\":201"));
        }
    }

    /**
     * Engines publish continuously while a second node joins. It subscribes, buffers, installs node 1's
     * snapshot with its watermarks, drops what the snapshot already covers and replays any hole, so once traffic stops
     * both nodes hold exactly what the engines hold, and each other's canonical dump. The engines can replay only their
     * last {@value #RING} batches and have published far more before the join, so the history can only have come from
     * the snapshot: replaying from seq 0 would be incomplete.
     */
    @Test
    void aNodeJoiningWhileEnginesPublishRecoversExactly() throws Exception {
        IndexerNode n1 = cluster.start();
        SimulatedEngine a = engine(EngineConfig.local(301, 0).withReplayCapacity(RING));
        SimulatedEngine b = engine(EngineConfig.local(302, 0).withReplayCapacity(RING));
        register(n1, a);
        register(n1, b);
        awaitSubscribers(a, 1);
        awaitSubscribers(b, 1);

        SyntheticPrompts prompts = SyntheticPrompts.standard(301, BLOCK);
        AtomicBoolean publishing = new AtomicBoolean(true);
        long[] sent = new long[2];
        Thread traffic = new Thread(
                () -> {
                    SimulatedEngine[] both = {a, b};
                    for (int i = 0; publishing.get(); i++) {
                        both[i % 2].submit(prompts.next());
                        sent[i % 2]++;
                        // ~1 ms apart: the engines keep publishing through the whole join, as real ones do.
                        LockSupport.parkNanos(1_000_000);
                    }
                },
                "traffic");
        traffic.start();
        try {
            Await.until(
                    "the engines published more than they can replay",
                    WAIT,
                    () -> a.totalBatches() > 4 * RING && b.totalBatches() > 4 * RING);
            IndexerNode n2 = cluster.start();
            assertEquals("http://127.0.0.1:" + n1.httpPort(), n2.recovery().peer());
            assertTrue(
                    n2.recovery().exact() && n2.recovery().events() > 0,
                    n2.recovery().toString());
            long atJoin = a.totalBatches();
            Await.until("traffic goes on after the join", WAIT, () -> a.totalBatches() > atJoin + 100);
            publishing.set(false);
            traffic.join();
            awaitIdle(a, b);

            Set<HeldBlock> truth = truth(a, b);
            assertFalse(truth.isEmpty());
            awaitBlocks("node 1 holds the engines' truth", n1, truth);
            awaitBlocks("the node that joined mid-traffic holds it too", n2, truth);
            assertEquals(blocks(n1), blocks(n2));
            assertEquals(watermarks(n1), watermarks(n2));
            for (IndexerNode n : List.of(n1, n2)) {
                assertEquals(0, n.counters().warningCount(WarningKind.BATCHES_LOST));
                assertEquals(0, n.counters().warningCount(WarningKind.REPLAY_INCOMPLETE));
                assertEquals(0, n.counters().warningCount(WarningKind.ENGINE_RESTART));
                assertEquals(0, n.counters().appliedCount("stored", "parent_block_not_found"));
            }
        } finally {
            publishing.set(false);
            traffic.join();
        }
    }

    /**
     * A clustered node recovers only workers the cluster registers. Its peer here (named with --peers) also follows an
     * engine the cluster does not register, as a node that missed the unregistration would: those blocks would stay
     * on the new node for good, since nothing there ever subscribes to that engine or removes them.
     */
    @Test
    void aClusteredNodeLeavesOutRecoveredBlocksOfWorkersTheClusterDoesNotRegister() throws Exception {
        IndexerNode n1 = cluster.start();
        SimulatedEngine a = engine(901);
        SimulatedEngine orphan = engine(902);
        register(n1, a);
        IndexerNode peer = IndexerNode.start(ServeConfig.local(0));
        try {
            register(peer, a);
            register(peer, orphan);
            awaitSubscribers(a, 2);
            awaitSubscribers(orphan, 1);
            SyntheticPrompts prompts = SyntheticPrompts.standard(901, BLOCK);
            for (int i = 0; i < 20; i++) {
                (i % 2 == 0 ? a : orphan).submit(prompts.next());
            }
            awaitIdle(a, orphan);
            awaitBlocks("the peer holds both engines' blocks", peer, truth(a, orphan));

            IndexerNode n2 = cluster.start(c -> c.withPeers(List.of("http://127.0.0.1:" + peer.httpPort())));
            assertTrue(n2.recovery().events() > 0, n2.recovery().toString());
            awaitBlocks("the new node holds only the registered engine's blocks", n2, truth(a));
            assertEquals(1, workerCount(n2));
        } finally {
            peer.close();
        }
    }

    @Test
    void twoNodesStartedAtTheSameMomentDoNotWaitForEachOther() throws Exception {
        CompletableFuture<IndexerNode> first = CompletableFuture.supplyAsync(this::startUnchecked);
        CompletableFuture<IndexerNode> second = CompletableFuture.supplyAsync(this::startUnchecked);
        IndexerNode n1 = first.get(60, TimeUnit.SECONDS);
        IndexerNode n2 = second.get(60, TimeUnit.SECONDS);
        for (IndexerNode n : List.of(n1, n2)) {
            assertEquals(200, http(n).get("/ready").statusCode());
        }
        Await.until(
                "they find each other",
                WAIT,
                () -> http(n1).get("/peers").body().contains(":" + n2.httpPort() + "\""));
        SimulatedEngine a = engine(401);
        register(n2, a);
        assertEquals(1, workerCount(n1), "a registration on either applies on the other");
    }

    /** A node with another cluster name, on the same hosts and ports, stays out of the cluster. */
    @Test
    void aNodeWithAnotherClusterNameDoesNotJoin() throws Exception {
        IndexerNode n1 = cluster.start();
        try (ClusterNodes strangers = new ClusterNodes()) {
            IndexerNode stray = strangers.start();
            assertEquals(1, MetricsPage.of(http(n1)).value("kvindexer_cluster_members"));
            assertEquals(1, MetricsPage.of(http(stray)).value("kvindexer_cluster_members"));
            register(n1, engine(501));
            assertEquals(0, workerCount(stray), "registrations stay within the cluster");
            assertEquals("[]", http(stray).get("/peers").body());
        }
    }

    private IndexerNode startUnchecked() {
        try {
            return cluster.start();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
