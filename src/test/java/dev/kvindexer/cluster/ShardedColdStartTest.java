package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sharded cluster whose every node keeps a data directory, stopped as a whole and started again node by node: each
 * instance's history comes back from the file of a node that held it, whichever node comes up first.
 */
class ShardedColdStartTest {
    private static final int NODES = 3;
    private static final int REPLICAS = 2;
    private static final int ENGINES = 6;
    /** The engines replay only their last few batches: history older than that can only come from the files. */
    private static final int SHORT_RING = 2;

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();

    @TempDir
    Path dirs;

    @AfterEach
    void stop() {
        cluster.close();
        fixture.close();
    }

    private IndexerNode node(int i) throws Exception {
        Path dir = dirs.resolve("node-" + i);
        // Long between snapshots: each node's file is the one it writes as it stops.
        return cluster.start(c -> c.withCluster(
                        c.cluster().withReplicationFactor(REPLICAS).withReconcileInterval(Duration.ofSeconds(1)))
                .withDurability(DurabilityConfig.inDirectory(dir, Duration.ofMinutes(10))));
    }

    @Test
    void everyInstanceComesBackFromTheFileOfANodeThatHeldIt() throws Exception {
        List<IndexerNode> nodes = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            nodes.add(node(i));
        }
        Await.until(
                "partition table settled",
                ClusterFixture.WAIT,
                () -> nodes.stream()
                        .allMatch(n -> n.hazelcast().getPartitionService().isClusterSafe()));
        List<SimulatedEngine> engines = new ArrayList<>();
        for (int i = 0; i < ENGINES; i++) {
            SimulatedEngine e = fixture.engine(EngineConfig.local(201 + i, 0).withReplayCapacity(SHORT_RING));
            fixture.register(nodes.get(0).httpPort(), e);
            engines.add(e);
        }
        for (SimulatedEngine e : engines) {
            ClusterFixture.awaitSubscribers(e, REPLICAS);
        }
        SyntheticPrompts source = SyntheticPrompts.standard(17, ClusterFixture.BLOCK);
        for (int i = 0; i < 8 * ENGINES; i++) {
            engines.get(i % ENGINES).submit(source.next());
        }
        SimulatedEngine[] all = engines.toArray(SimulatedEngine[]::new);
        ClusterFixture.awaitIdle(all);
        for (SimulatedEngine e : engines) {
            assertTrue(
                    e.totalBatches() > 2 * SHORT_RING, "engine " + e.instanceId() + " published " + e.totalBatches());
        }
        Set<HeldBlock> before = ClusterFixture.truth(all);
        for (IndexerNode n : nodes) {
            fixture.awaitBlocks("every node's /dump gathers every instance", n.httpPort(), before, () -> "");
        }

        // The first to stop writes only its own shards; started first again, it alone holds every shard for a while.
        for (IndexerNode n : nodes) {
            cluster.stop(n);
        }
        List<IndexerNode> restarted = new ArrayList<>();
        for (int i = 0; i < NODES; i++) {
            restarted.add(node(i));
        }
        for (IndexerNode n : restarted) {
            fixture.awaitBlocks(
                    "every instance's blocks back after the cold start",
                    n.httpPort(),
                    before,
                    () -> " on node " + n.httpPort() + ", workers " + fixture.workers(n.httpPort()));
        }
        Set<HeldBlock> after = ClusterFixture.truth(all);
        assertTrue(after.equals(before), "the engines published nothing meanwhile");
    }
}
