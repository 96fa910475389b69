package dev.kvindexer.cluster;

import static dev.kvindexer.support.ClusterFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import io.vertx.core.shareddata.AsyncMap;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Anti-entropy: the map changes behind the nodes' backs, as a missed announcement or a lost map entry leaves it, and
 * every node converges by its periodic reconcile alone (nothing announces these changes).
 */
class ClusterAntiEntropyTest {
    private static final Duration PERIOD = Duration.ofMillis(200);

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();
    private final ClusterValues values = new ClusterValues(null, new ClusterCounters());

    @AfterEach
    void stop() {
        fixture.close();
        cluster.close();
    }

    private IndexerNode start() throws Exception {
        return cluster.start(c -> c.withCluster(c.cluster().withReconcileInterval(PERIOD)));
    }

    private static AsyncMap<Object, Object> map(IndexerNode via, String name) throws Exception {
        return await(via.vertx().sharedData().getAsyncMap(name));
    }

    private static long repairs(List<IndexerNode> nodes, String action) {
        return nodes.stream()
                .mapToLong(n -> n.meters().cluster().repairCount(action))
                .sum();
    }

    private void awaitWorkers(List<IndexerNode> nodes, int n, String what) {
        for (IndexerNode node : nodes) {
            Await.equal(
                    what + " on node " + node.httpPort(),
                    ClusterFixture.WAIT,
                    n,
                    () -> fixture.workerCount(node.httpPort()));
        }
    }

    @Test
    void nodesConvergeOnChangesNoOneAnnounced() throws Exception {
        IndexerNode n1 = start();
        IndexerNode n2 = start();
        List<IndexerNode> both = List.of(n1, n2);
        AsyncMap<Object, Object> registrations = map(n2, ClusterRegistrar.MAP);

        // A registration written into the map and announced to no one (its announcements were lost).
        SimulatedEngine a = fixture.engine(601);
        RegisterRequest ra = new RegisterRequest(
                601,
                0,
                a.endpoint(),
                a.replayEndpoint(),
                new PartitionKey(ClusterFixture.MODEL, "default"),
                ClusterFixture.BLOCK);
        String keyA = ClusterValues.key(601, 0);
        await(registrations.put(keyA, values.registration(ra)));
        awaitWorkers(both, 1, "the registration nobody announced is applied");
        ClusterFixture.awaitSubscribers(a, 2);
        assertEquals(2, repairs(both, ClusterRegistrar.REGISTERED), "each node found it missing in a full reconcile");

        SyntheticPrompts prompts = SyntheticPrompts.standard(601, ClusterFixture.BLOCK);
        for (int i = 0; i < 10; i++) {
            a.submit(prompts.next());
        }
        ClusterFixture.awaitIdle(a);
        for (IndexerNode n : both) {
            fixture.awaitBlocks("node holds engine a's blocks", n.httpPort(), ClusterFixture.truth(a), () -> "");
        }

        // An unregistration whose announcement was missed: tombstone, then the key removed, as unregister does.
        await(map(n2, ClusterRegistrar.TOMBSTONES)
                .put(
                        keyA,
                        values.tombstone(keyA, System.currentTimeMillis()),
                        ClusterRegistrar.TOMBSTONE_TTL.toMillis()));
        await(registrations.remove(keyA));
        awaitWorkers(both, 0, "the orphan registration is removed");
        for (IndexerNode n : both) {
            fixture.awaitBlocks("the orphan's blocks are gone", n.httpPort(), Set.of(), () -> "");
        }
        assertEquals(2, repairs(both, ClusterRegistrar.UNREGISTERED));
        assertNull(await(registrations.get(keyA)), "and not written back");

        // A registration the map lost (no tombstone): the nodes holding it write it back from their own state.
        SimulatedEngine b = fixture.engine(602);
        fixture.register(n1.httpPort(), b);
        String keyB = ClusterValues.key(602, 0);
        Object stored = await(registrations.get(keyB));
        await(registrations.remove(keyB));
        Await.until(
                "a node writes the lost registration back",
                ClusterFixture.WAIT,
                () -> repairs(both, ClusterRegistrar.REWRITTEN) >= 1);
        assertEquals(stored, await(registrations.get(keyB)));
        awaitWorkers(both, 1, "engine b stays registered");
        ClusterFixture.awaitSubscribers(b, 2);
    }
}
