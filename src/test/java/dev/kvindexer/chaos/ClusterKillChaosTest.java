package dev.kvindexer.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChaosReport;
import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cycle after cycle for minutes: one or both child nodes of a three-node cluster killed with SIGKILL while engines
 * publish, sometimes a worker unregistered and registered again while they are down, then the nodes started again.
 * After every cycle all three must list the same workers and hold exactly what the engines hold; the report gives
 * how long that took. The sharded run (R = 2) always kills both children, so the shards they alone held must be
 * rebuilt from the engines by the survivor, and every node's answers must equal a standalone node's.
 */
@Tag("chaos")
// Chaos runs last as long as they are asked to (-Dkvindexer.chaos.minutes), far beyond the default test timeout.
@Timeout(value = 3, unit = TimeUnit.HOURS)
class ClusterKillChaosTest {
    private static final int ENGINES = 12;
    private static final Duration START = ChildNode.START_PATIENCE;
    private static final Duration CONVERGE = Duration.ofSeconds(60);

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();
    private final List<ChildNode> children = new ArrayList<>();
    private final AtomicBoolean publishing = new AtomicBoolean();

    @TempDir
    Path logs;

    private int started;

    @AfterEach
    void stop() {
        children.forEach(ChildNode::close);
        fixture.close();
        cluster.close();
    }

    private ChildNode child(int replicationFactor) {
        List<String> args = new ArrayList<>(cluster.childFlags());
        args.addAll(List.of("--threads", "2", "--ingest-threads", "1"));
        if (replicationFactor != ClusterConfig.FULL) {
            args.addAll(List.of("--replication-factor", Integer.toString(replicationFactor)));
        }
        ChildNode c = ChildNode.start(logs, "node-" + started++, args);
        children.add(c);
        return c;
    }

    @Test
    void nodesKilledAgainAndAgainUnderLoadAlwaysComeBackExact() throws Exception {
        run("cluster-kill", ClusterConfig.FULL, false);
    }

    @Test
    void shardedNodesBothKilledAgainAndAgainAlwaysComeBackExact() throws Exception {
        run("sharded-kill", 2, true);
    }

    /** {@code alwaysBoth}: every cycle kills both children, else one or both at random. */
    private void run(String name, int replicationFactor, boolean alwaysBoth) throws Exception {
        double minutes = ChaosReport.minutes(5);
        ChaosReport report = new ChaosReport(name);
        IndexerNode survivor = cluster.start(c -> c.withCluster(
                c.cluster().withReplicationFactor(replicationFactor).withReconcileInterval(Duration.ofSeconds(1))));
        IndexerNode reference = IndexerNode.start(ServeConfig.local(0));
        try {
            cycles(report, minutes, survivor, reference, replicationFactor, alwaysBoth);
        } finally {
            reference.close();
        }
    }

    private void cycles(
            ChaosReport report,
            double minutes,
            IndexerNode survivor,
            IndexerNode reference,
            int replicationFactor,
            boolean alwaysBoth)
            throws Exception {
        ChildNode[] nodes = {child(replicationFactor), child(replicationFactor)};
        for (ChildNode n : nodes) {
            n.awaitReady(START);
        }
        List<Integer> ports = List.of(survivor.httpPort(), nodes[0].httpPort(), nodes[1].httpPort());
        List<SimulatedEngine> engines = new ArrayList<>();
        for (int i = 0; i < ENGINES; i++) {
            // A ring that holds an engine's whole run: a shard whose every holder died is rebuilt from it.
            SimulatedEngine e = fixture.engine(EngineConfig.local(901 + i, 0).withReplayCapacity(1 << 20));
            engines.add(e);
            fixture.register(ports.get(i % 3), e);
            fixture.register(reference.httpPort(), e);
        }
        SplittableRandom rnd = new SplittableRandom(901);
        List<int[]> prompts = new ArrayList<>();
        List<Long> convergeMillis = new ArrayList<>();
        int singleKills = 0;
        int doubleKills = 0;
        int churned = 0;
        long end = System.nanoTime() + (long) (minutes * 60e9);
        while (System.nanoTime() < end) {
            Thread traffic = traffic(engines, prompts);
            LockSupport.parkNanos(Duration.ofSeconds(2).toNanos());
            boolean both = alwaysBoth || rnd.nextBoolean();
            List<Integer> victims = both ? List.of(0, 1) : List.of(rnd.nextInt(2));
            for (int v : victims) {
                nodes[v].kill();
            }
            if (both) {
                doubleKills++;
            } else {
                singleKills++;
            }
            Await.equal(
                    "members after the kill",
                    START,
                    3 - victims.size(),
                    () -> survivor.hazelcast().getCluster().getMembers().size());
            if (rnd.nextInt(3) == 0) {
                // Churn while nodes are down: the restarted ones must learn the unregister and the new registration.
                SimulatedEngine e = engines.get(rnd.nextInt(ENGINES));
                assertEquals(
                        200,
                        fixture.http(survivor.httpPort())
                                .post(
                                        "/unregister",
                                        new JsonObject()
                                                .put("instance_id", e.instanceId())
                                                .put("model_name", ClusterFixture.MODEL)
                                                .encode())
                                .statusCode());
                fixture.register(survivor.httpPort(), e);
                churned++;
            }
            LockSupport.parkNanos(Duration.ofSeconds(2).toNanos());
            for (int v : victims) {
                nodes[v] = child(replicationFactor);
            }
            for (int v : victims) {
                nodes[v].awaitReady(START);
            }
            publishing.set(false);
            traffic.join();
            ClusterFixture.awaitIdle(engines.toArray(new SimulatedEngine[0]));
            long from = System.nanoTime();
            Set<HeldBlock> truth = ClusterFixture.truth(engines.toArray(new SimulatedEngine[0]));
            java.util.function.IntFunction<String> shared =
                    replicationFactor == ClusterConfig.FULL ? fixture::sharedWorkers : fixture::sharedRegistrations;
            String workers = shared.apply(survivor.httpPort());
            assertEquals(ENGINES, new JsonArray(workers).size(), workers);
            fixture.awaitBlocks("the reference holds what the engines hold", reference.httpPort(), truth, () -> "");
            for (int port : List.of(survivor.httpPort(), nodes[0].httpPort(), nodes[1].httpPort())) {
                Await.equal("/workers of node " + port, CONVERGE, workers, () -> shared.apply(port));
                fixture.awaitBlocks("node " + port + " holds what the engines hold", port, truth, () -> "");
                awaitAnswersLike(reference, port, prompts);
            }
            convergeMillis.add((System.nanoTime() - from) / 1_000_000);
        }
        List<Long> sorted = convergeMillis.stream().sorted().toList();
        report.line(
                "| run | %.1f min, 3 nodes (2 in their own JVMs, killed with SIGKILL), %s, %d engines publishing |",
                minutes,
                replicationFactor == ClusterConfig.FULL ? "full replicas" : "R = " + replicationFactor,
                ENGINES);
        report.line(
                "| cycles / single kills / double kills / churned registrations | %d / %d / %d / %d |",
                sorted.size(), singleKills, doubleKills, churned);
        report.line(
                "| every cycle converged (same /workers, dumps equal the engines, answers equal a standalone "
                        + "node's) | yes, %d of %d |",
                sorted.size(), sorted.size());
        report.line(
                "| shards rebuilt from the engines (survivor) | %d |",
                (long) MetricsPage.of(fixture.http(survivor.httpPort())).value("kvindexer_shard_rebuilds_total"));
        report.line(
                "| convergence after the engines went idle, min / median / max | %d / %d / %d ms |",
                sorted.get(0), sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1));
    }

    /** The last prompts sent, answered on {@code port} exactly as the standalone reference answers them. */
    private void awaitAnswersLike(IndexerNode reference, int port, List<int[]> prompts) {
        List<int[]> last;
        synchronized (prompts) {
            last = new ArrayList<>(prompts.subList(Math.max(0, prompts.size() - 20), prompts.size()));
        }
        Await.until("node " + port + " answers like the reference", CONVERGE, () -> {
            for (int[] p : last) {
                var expected = fixture.query(reference.httpPort(), p);
                var got = fixture.query(port, p);
                if (got.statusCode() != 200
                        || !expected.body().equals(got.body())
                        || got.headers()
                                .firstValue("x-kvindexer-missing-instances")
                                .isPresent()) {
                    return false;
                }
            }
            return true;
        });
    }

    private Thread traffic(List<SimulatedEngine> engines, List<int[]> sent) {
        publishing.set(true);
        SyntheticPrompts prompts = SyntheticPrompts.standard(started, ClusterFixture.BLOCK);
        Thread t = new Thread(
                () -> {
                    for (int i = 0; publishing.get(); i++) {
                        int[] p = prompts.next();
                        synchronized (sent) {
                            sent.add(p);
                        }
                        engines.get(i % engines.size()).submit(p);
                        LockSupport.parkNanos(2_000_000);
                    }
                },
                "traffic");
        t.start();
        return t;
    }
}
