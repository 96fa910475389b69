package dev.kvindexer.cluster;

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
import dev.kvindexer.support.MetricsPage;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sharded cluster (R = 2) of one node in this JVM and two in JVMs of their own loses one child to SIGKILL while
 * engines publish: the survivors take over the dead node's replicas, and every query on the surviving in-JVM node
 * answers exactly what a standalone node fed the same engines answers.
 */
class ShardedCrashTest {
    private static final int ENGINES = 8;
    private static final Duration START = ChildNode.START_PATIENCE;

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();
    private IndexerNode reference;

    @TempDir
    Path logs;

    private ChildMembers children;

    @BeforeEach
    void children() {
        children = new ChildMembers(logs, cluster);
    }

    @AfterEach
    void stop() {
        children.close();
        fixture.close();
        cluster.close();
        if (reference != null) {
            reference.close();
        }
    }

    private String query(int port, int[] prompt) {
        HttpResponse<String> r = fixture.query(port, prompt);
        return r.statusCode()
                + (r.headers().firstValue("x-kvindexer-missing-instances").isPresent() ? " missing " : " ")
                + r.body();
    }

    @Test
    void aNodeKilledUnderLoadLosesNoAnswer() throws Exception {
        IndexerNode survivor = cluster.start(
                c -> c.withCluster(c.cluster().withReplicationFactor(2).withReconcileInterval(Duration.ofSeconds(1))));
        ChildNode doomed = children.start("doomed", "--replication-factor", "2");
        ChildNode other = children.start("other", "--replication-factor", "2");
        doomed.awaitReady(START);
        other.awaitReady(START);
        Await.equal(
                "cluster members",
                START,
                3,
                () -> survivor.hazelcast().getCluster().getMembers().size());
        reference = IndexerNode.start(ServeConfig.local(0));

        List<SimulatedEngine> engines = new ArrayList<>();
        for (int i = 0; i < ENGINES; i++) {
            SimulatedEngine e = fixture.engine(EngineConfig.local(901 + i, 0));
            engines.add(e);
            fixture.register(survivor.httpPort(), e);
            fixture.register(reference.httpPort(), e);
        }
        for (SimulatedEngine e : engines) {
            ClusterFixture.awaitSubscribers(e, 3);
        }
        // The placement settles as the registrations arrive: the kill is of a node holding its final share.
        fixture.awaitPlaced(List.of(survivor.httpPort(), doomed.httpPort(), other.httpPort()), ENGINES, 2);

        SyntheticPrompts source = SyntheticPrompts.standard(901, ClusterFixture.BLOCK);
        List<int[]> prompts = new ArrayList<>();
        AtomicBoolean publishing = new AtomicBoolean(true);
        Thread traffic = new Thread(
                () -> {
                    for (int i = 0; publishing.get(); i++) {
                        int[] p = source.next();
                        synchronized (prompts) {
                            prompts.add(p);
                        }
                        engines.get(i % ENGINES).submit(p);
                        LockSupport.parkNanos(3_000_000);
                    }
                },
                "traffic");
        traffic.start();
        try {
            long before = engines.get(0).totalBatches();
            Await.until("traffic before the kill", START, () -> engines.get(0).totalBatches() > before + 10);
            doomed.kill();
            Await.equal(
                    "the killed node is gone",
                    START,
                    2,
                    () -> survivor.hazelcast().getCluster().getMembers().size());
            long afterKill = engines.get(0).totalBatches();
            Await.until("traffic after the kill", START, () -> engines.get(0).totalBatches() > afterKill + 10);
        } finally {
            publishing.set(false);
            traffic.join();
        }
        ClusterFixture.awaitIdle(engines.toArray(new SimulatedEngine[0]));
        Set<HeldBlock> truth = ClusterFixture.truth(engines.toArray(new SimulatedEngine[0]));
        fixture.awaitBlocks("the reference holds what the engines hold", reference.httpPort(), truth, () -> "");

        // Two nodes left with two replicas wanted: both hold every instance again, history included.
        fixture.awaitHostedBlocks(
                "the surviving node in this JVM holds what the engines hold", survivor, truth, children::logs);
        Await.until(
                "the other survivor listens to every engine itself",
                START,
                () -> !fixture.workers(other.httpPort()).contains("\"remote\""));
        fixture.awaitBlocks("/dump of the other survivor", other.httpPort(), truth, children::logs);
        List<int[]> asked;
        synchronized (prompts) {
            asked = new ArrayList<>(prompts.subList(Math.max(0, prompts.size() - 40), prompts.size()));
        }
        assertTrue(asked.size() > 10, "prompts were published: " + asked.size());
        Set<String> differences = new HashSet<>();
        Await.until("every answer equals the standalone node's", ClusterFixture.WAIT, () -> {
            differences.clear();
            for (int[] p : asked) {
                String expected = query(reference.httpPort(), p);
                for (int port : List.of(survivor.httpPort(), other.httpPort())) {
                    String got = query(port, p);
                    if (!expected.equals(got)) {
                        differences.add(port + ": " + got + " vs " + expected);
                    }
                }
            }
            return differences.isEmpty();
        });
    }

    /**
     * Both holders of some shards are SIGKILLed: the survivor names the instances it cannot reach in its answers and
     * dumps until it has subscribed to their engines and rebuilt them from replay, then holds exactly what the engines
     * hold. The killed nodes, started again with the same flags, converge on the same truth.
     */
    @Test
    void bothHoldersKilledTheSurvivorRebuildsFromTheEnginesAndTheRestartedNodesCatchUp() throws Exception {
        IndexerNode survivor = cluster.start(
                c -> c.withCluster(c.cluster().withReplicationFactor(2).withReconcileInterval(Duration.ofSeconds(1))));
        List<ChildNode> doomed = new ArrayList<>(List.of(
                children.start("a", "--replication-factor", "2"), children.start("b", "--replication-factor", "2")));
        for (ChildNode c : doomed) {
            c.awaitReady(START);
        }
        Await.equal(
                "cluster members",
                START,
                3,
                () -> survivor.hazelcast().getCluster().getMembers().size());
        reference = IndexerNode.start(ServeConfig.local(0));
        // Shards are balanced: of the instances, the survivor holds R / N (two of three nodes, R = 2), so a third
        // of them are held only by the two children.
        List<SimulatedEngine> engines = new ArrayList<>();
        for (long id = 701; engines.size() < ENGINES; id++) {
            SimulatedEngine e = fixture.engine(EngineConfig.local(id, 0));
            engines.add(e);
            fixture.register(survivor.httpPort(), e);
            fixture.register(reference.httpPort(), e);
        }
        for (SimulatedEngine e : engines) {
            ClusterFixture.awaitSubscribers(e, 3);
        }
        SyntheticPrompts source = SyntheticPrompts.standard(701, ClusterFixture.BLOCK);
        List<int[]> prompts = new ArrayList<>();
        for (int i = 0; i < 48; i++) {
            int[] p = source.next();
            prompts.add(p);
            engines.get(i % ENGINES).submit(p);
        }
        ClusterFixture.awaitIdle(engines.toArray(new SimulatedEngine[0]));
        Set<HeldBlock> truth = ClusterFixture.truth(engines.toArray(new SimulatedEngine[0]));
        fixture.awaitBlocks("the reference holds what the engines hold", reference.httpPort(), truth, () -> "");
        fixture.awaitBlocks("the cluster holds what the engines hold", survivor.httpPort(), truth, children::logs);
        fixture.awaitPlaced(
                List.of(
                        survivor.httpPort(),
                        doomed.get(0).httpPort(),
                        doomed.get(1).httpPort()),
                ENGINES,
                2);

        for (ChildNode c : doomed) {
            c.kill();
        }
        // Until the survivor has rebuilt the lost shards, a dump that lacks them says so; none passes for whole.
        int[] flagged = {0};
        Await.until("the survivor's dump is whole again", START, () -> {
            HttpResponse<String> r = fixture.http(survivor.httpPort()).get("/dump");
            boolean missing =
                    r.headers().firstValue("x-kvindexer-missing-instances").isPresent();
            Set<HeldBlock> dumped = dev.kvindexer.support.DumpBlocks.parse(r.body(), ClusterFixture.PARTITION);
            if (missing) {
                flagged[0]++;
                assertTrue(r.body().contains("\"missing_instances\":["), "the lacking partition names them");
                return false;
            }
            return dumped.equals(truth);
        });
        assertTrue(flagged[0] > 0, "a dump taken while the shards were lost said so");
        Await.equal(
                "the killed nodes are gone",
                START,
                1,
                () -> survivor.hazelcast().getCluster().getMembers().size());
        fixture.awaitHostedBlocks(
                "the survivor rebuilt every lost shard from the engines", survivor, truth, children::logs);
        assertTrue(MetricsPage.of(fixture.http(survivor.httpPort())).value("kvindexer_shard_rebuilds_total") > 0);

        // The engines go on; the killed nodes come back with the same flags.
        for (int i = 0; i < 16; i++) {
            int[] p = source.next();
            prompts.add(p);
            engines.get(i % ENGINES).submit(p);
        }
        List<ChildNode> back = List.of(
                children.start("a2", "--replication-factor", "2"), children.start("b2", "--replication-factor", "2"));
        for (ChildNode c : back) {
            c.awaitReady(START);
        }
        ClusterFixture.awaitIdle(engines.toArray(new SimulatedEngine[0]));
        Set<HeldBlock> after = ClusterFixture.truth(engines.toArray(new SimulatedEngine[0]));
        fixture.awaitBlocks("the reference holds what the engines hold", reference.httpPort(), after, () -> "");
        for (int port :
                List.of(survivor.httpPort(), back.get(0).httpPort(), back.get(1).httpPort())) {
            fixture.awaitBlocks("/dump of every node after the restart", port, after, children::logs);
        }
        Set<String> differences = new HashSet<>();
        Await.until("every answer equals the standalone node's", ClusterFixture.WAIT, () -> {
            differences.clear();
            for (int[] p : prompts.subList(prompts.size() - 20, prompts.size())) {
                String expected = query(reference.httpPort(), p);
                for (int port : List.of(
                        survivor.httpPort(), back.get(0).httpPort(), back.get(1).httpPort())) {
                    String got = query(port, p);
                    if (!expected.equals(got)) {
                        differences.add(port + ": " + got + " vs " + expected);
                    }
                }
            }
            return differences.isEmpty();
        });
    }
}
