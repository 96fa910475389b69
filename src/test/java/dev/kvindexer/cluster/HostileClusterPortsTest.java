package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.cluster.Member;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.eventbus.DeliveryOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attacks of the reliability issue against a node in a JVM of its own with the production JVM option
 * {@code -XX:+ExitOnOutOfMemoryError} and a 256 MiB heap, in a cluster with an auth token: 14 bytes to its Hazelcast
 * port declaring a two-gigabyte packet (unguarded, the member allocates it and the JVM exits), and a two-gigabyte
 * event-bus frame followed by 400 MiB of zeros (unguarded, the node buffers it until it exits), and 1,400
 * connections to its Hazelcast port each sending only the protocol bytes {@code HZC} (unguarded, their buffers end a
 * 384 MiB node before their handshake deadline closes them). The node stays up, a member of its cluster, and
 * reachable over the bus.
 */
class HostileClusterPortsTest {
    private static final String TOKEN = "ports-secret";
    private static final List<String> PRODUCTION_JVM =
            List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    private static final long MIB = 1 << 20;
    /** Connections of the crowd that sends only the member protocol's first bytes. */
    private static final int CROWD = 1400;

    private final ClusterNodes cluster = new ClusterNodes();
    private final List<ChildNode> children = new ArrayList<>();

    @TempDir
    Path logs;

    @AfterEach
    void stop() {
        children.forEach(ChildNode::close);
        cluster.close();
    }

    /** The other member's Vert.x node id, as {@code from} sees it. */
    private static String otherNodeId(IndexerNode from) {
        for (Member m : from.hazelcast().getCluster().getMembers()) {
            if (!m.localMember()) {
                return m.getAttribute("__vertx.nodeId");
            }
        }
        throw new AssertionError("no other member");
    }

    /** A signed change announcement to the node, which answers every one: the bus to it works. */
    private static void assertBusReaches(IndexerNode from, String nodeId) throws Exception {
        ClusterValues signed = new ClusterValues(TOKEN, new ClusterCounters());
        ClusterFixture.await(from.vertx()
                .eventBus()
                .request(
                        ClusterRegistrar.CHANGED_PREFIX + nodeId,
                        signed.announcement("1:0"),
                        new DeliveryOptions().setSendTimeout(Await.PATIENCE.toMillis())));
    }

    private static void assertAlive(ChildNode node) {
        assertTrue(
                ProcessHandle.of(node.pid()).map(ProcessHandle::isAlive).orElse(false),
                "the node is alive; its log ends:\n" + node.tail());
    }

    @Test
    void aNodeWithProductionOptionsOutlivesBothAttacks() throws Exception {
        IndexerNode local = cluster.start(c -> c.withSecurity(new SecurityConfig(TOKEN, false, null, null)));
        int memberPort = FreePort.any();
        int busPort = FreePort.any();
        ChildNode target = ChildNode.start(
                logs,
                "target",
                PRODUCTION_JVM,
                List.of(
                        "--cluster",
                        "--cluster-name",
                        cluster.name(),
                        "--cluster-members",
                        "127.0.0.1:" + MemberGuardTest.memberPort(local.hazelcast()),
                        "--cluster-host",
                        "127.0.0.1",
                        "--cluster-port",
                        Integer.toString(memberPort),
                        "--cluster-bus-port",
                        Integer.toString(busPort),
                        "--threads",
                        "2",
                        "--ingest-threads",
                        "1"),
                Map.of("KVINDEXER_AUTH_TOKEN", TOKEN));
        children.add(target);
        int httpPort = target.awaitReady(ChildNode.START_PATIENCE);
        Await.until(
                "two members",
                Await.PATIENCE,
                () -> local.hazelcast().getCluster().getMembers().size() == 2);
        String targetId = otherNodeId(local);
        assertBusReaches(local, targetId);

        for (int i = 0; i < 4; i++) {
            assertAlive(target);
            try (HostileConnection c = HostileConnection.open(memberPort)) {
                c.send(HostileConnection.memberPacket(HostileConnection.HUGE));
                assertTrue(
                        c.closedWithin(Await.PATIENCE),
                        "the member closed the connection; its log ends:\n" + target.tail());
            }
        }
        assertAlive(target);
        try (HostileConnection c = HostileConnection.open(busPort)) {
            c.send(HostileConnection.busFrame(HostileConnection.HUGE));
            long sent = c.streamZeros(400 * MIB);
            assertTrue(sent < 32 * MIB, "the bus closed the connection after " + sent / MIB + " MiB");
        }

        assertAlive(target);
        List<HostileConnection> crowd = new ArrayList<>();
        try {
            for (int i = 0; i < CROWD; i++) {
                // On a loaded machine a connect can fail outright (the node refuses the crowd faster than the
                // kernel finishes it): such a one is simply not part of the crowd.
                HostileConnection c = HostileConnection.tryOpen(memberPort);
                if (c != null) {
                    crowd.add(c);
                    c.send(new byte[] {'H', 'Z', 'C'});
                }
            }
            assertAlive(target);
            // Past the pending bound each is refused at once; the rest are closed at their handshake deadline.
            Await.until(
                    "every connection of the crowd closed",
                    Duration.ofSeconds(MemberGuard.HANDSHAKE_SECONDS).plus(Await.PATIENCE),
                    () -> crowd.stream().allMatch(c -> c.closedWithin(Duration.ofMillis(1))));
        } finally {
            crowd.forEach(HostileConnection::close);
        }
        int opened = crowd.size();
        assertTrue(opened > CROWD / 2, "only " + opened + " of the crowd could connect");

        assertAlive(target);
        HttpJson http = new HttpJson(httpPort);
        assertEquals(200, http.get("/health").statusCode());
        assertEquals(2, local.hazelcast().getCluster().getMembers().size());
        assertBusReaches(local, targetId);
        MetricsPage metrics = MetricsPage.of(http);
        assertEquals(
                4,
                metrics.value("kvindexer_cluster_connections_refused_total{port=\"member\",reason=\"packet_size\"}"));
        assertEquals(
                1, metrics.value("kvindexer_cluster_connections_refused_total{port=\"bus\",reason=\"tls_handshake\"}"));
        double crowded = metrics.value(
                "kvindexer_cluster_connections_refused_total{port=\"member\",reason=\"" + MemberGuard.CROWDED + "\"}");
        double late =
                metrics.value("kvindexer_cluster_connections_refused_total{port=\"member\",reason=\"no_handshake\"}");
        // How many wait at once is bounded, not how many are let in over the attack: on a slow machine the crowd takes
        // longer than a deadline to arrive, and a slot freed by a closed one takes the next.
        assertTrue(crowded > 0, "refused at the door: " + crowded);
        assertTrue(
                crowded + late >= opened && crowded + late <= CROWD,
                "each of the crowd refused or closed at its deadline, once: " + crowded + " + " + late);
        assertTrue(metrics.value("kvindexer_network_memory_peak_bytes")
                <= metrics.value("kvindexer_network_memory_budget_bytes"));
    }
}
