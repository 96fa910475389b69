package dev.kvindexer.cluster;

import static dev.kvindexer.support.ClusterFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.shareddata.AsyncMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Nodes sharing an auth token apply only what is signed with it. Entries written straight into the cluster maps and
 * messages sent straight onto the event bus (through another member, as anyone who joins the cluster could) without
 * the token's signature are ignored and counted; properly signed ones still apply.
 */
class SignedClusterValuesTest {
    private static final String TOKEN = "cluster-secret";

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();
    private final ClusterValues signed = new ClusterValues(TOKEN, new ClusterCounters());
    private final ClusterValues unsigned = new ClusterValues(null, new ClusterCounters());
    private final ClusterValues otherToken = new ClusterValues("not-the-token", new ClusterCounters());

    @AfterEach
    void stop() {
        fixture.close();
        cluster.close();
    }

    private IndexerNode start() throws Exception {
        // No periodic reconcile within the test: each forged value is read exactly when the test says.
        return cluster.start(c -> c.withSecurity(new SecurityConfig(TOKEN, false, null, null))
                .withCluster(c.cluster().withReconcileInterval(ClusterConfig.MAX_RECONCILE_INTERVAL)));
    }

    private static RegisterRequest registration(SimulatedEngine e) {
        return new RegisterRequest(
                e.instanceId(),
                0,
                e.endpoint(),
                e.replayEndpoint(),
                new PartitionKey(ClusterFixture.MODEL, "default"),
                ClusterFixture.BLOCK);
    }

    /** What a registering node sends after writing the map: node {@code to} reconciles {@code key}, then answers. */
    private static void announce(IndexerNode via, IndexerNode to, ClusterValues as, String key) throws Exception {
        await(via.vertx()
                .eventBus()
                .request(ClusterRegistrar.CHANGED_PREFIX + to.membership().nodeId(), as.announcement(key)));
    }

    @Test
    void aNodeWithATokenIgnoresUnsignedAndBadlySignedEntriesAndAppliesSignedOnes() throws Exception {
        IndexerNode n1 = start();
        IndexerNode n2 = start();
        AsyncMap<Object, Object> registrations = await(n2.vertx().sharedData().getAsyncMap(ClusterRegistrar.MAP));
        SimulatedEngine x = fixture.engine(701);
        SimulatedEngine y = fixture.engine(702);
        SimulatedEngine z = fixture.engine(703);
        await(registrations.put(ClusterValues.key(701, 0), unsigned.registration(registration(x))));
        await(registrations.put(ClusterValues.key(702, 0), otherToken.registration(registration(y))));
        await(registrations.put(ClusterValues.key(703, 0), signed.registration(registration(z))));
        for (long id : new long[] {701, 702, 703}) {
            announce(n2, n1, signed, ClusterValues.key(id, 0));
        }

        JsonArray workers = new JsonArray(fixture.workers(n1.httpPort()));
        assertEquals(1, workers.size(), workers.encode());
        assertEquals(703L, workers.getJsonObject(0).getLong("instance_id"));
        ClusterFixture.awaitSubscribers(z, 1);
        assertEquals(0, x.subscriptions() + y.subscriptions(), "no node subscribed to the forged registrations");
        MetricsPage metrics = MetricsPage.of(fixture.http(n1.httpPort()));
        assertEquals(
                1,
                metrics.value("kvindexer_cluster_values_rejected_total{source=\"registrations\",reason=\"unsigned\"}"));
        assertEquals(
                1,
                metrics.value(
                        "kvindexer_cluster_values_rejected_total{source=\"registrations\",reason=\"bad_signature\"}"));

        // An announcement without the signature is not even read as a key.
        long before = n1.meters().cluster().reconcileCount();
        announce(n2, n1, unsigned, ClusterValues.key(701, 0));
        assertEquals(1, n1.meters().cluster().rejectedCount(ClusterValues.ANNOUNCEMENTS, ClusterValues.UNSIGNED));
        assertEquals(before, n1.meters().cluster().reconcileCount());

        // A member entry pointing elsewhere, signed with another token: never a peer (it would get the token).
        String n2Id = n2.membership().nodeId();
        AsyncMap<Object, Object> members = await(n2.vertx().sharedData().getAsyncMap(ClusterMembership.MAP));
        await(members.put(n2Id, otherToken.member(n2Id, "http://127.0.0.1:9", true)));
        String peers = fixture.http(n1.httpPort()).get("/peers").body();
        assertFalse(peers.contains("127.0.0.1:9\""), peers);
        assertTrue(n1.meters().cluster().rejectedCount(ClusterValues.MEMBERS, ClusterValues.BAD_SIGNATURE) >= 1);
    }
}
