package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.KubernetesConfig;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Kubernetes discovery as a scaled StatefulSet uses it: every node is started with the same member port and the name of
 * a headless service, and Hazelcast's DNS lookup of that name finds the others. Here the name is {@code localhost}.
 */
class ServiceDnsJoinTest {
    @Test
    void aServiceDnsNameReplacesTheMemberList() {
        ClusterConfig settings = new ClusterConfig("prod", List.of("10.0.0.1"), "10.0.0.1", 5801, null, null)
                .withServiceDns("kvindexer-headless.llm.svc.cluster.local");
        Config c = HazelcastConfigs.load(settings);
        JoinConfig join = c.getAdvancedNetworkConfig().getJoin();
        assertFalse(join.getTcpIpConfig().isEnabled(), "the member list is not used");
        KubernetesConfig k8s = join.getKubernetesConfig();
        assertTrue(k8s.isEnabled());
        assertEquals("kvindexer-headless.llm.svc.cluster.local", k8s.getProperty("service-dns"));
        assertEquals("5801", k8s.getProperty("service-port"));
        assertFalse(join.getMulticastConfig().isEnabled());
        assertFalse(
                HazelcastConfigs.load(settings.withServiceDns(null))
                        .getAdvancedNetworkConfig()
                        .getJoin()
                        .getKubernetesConfig()
                        .isEnabled(),
                "without a name, the member list again");
        assertThrows(IllegalArgumentException.class, () -> settings.withServiceDns(" "));
        assertThrows(IllegalArgumentException.class, () -> settings.withServiceDns("a b"));
    }

    @Test
    void nodesStartedWithOnePortAndOneNameFindEachOtherByDns() throws Exception {
        assertTrue(
                List.of(InetAddress.getAllByName("localhost")).contains(InetAddress.getByName("127.0.0.1")),
                "localhost resolves to the loopback address");
        int port = freePortPair();
        try (ClusterNodes cluster = new ClusterNodes()) {
            ClusterConfig settings = new ClusterConfig(
                            cluster.name(), List.of(ClusterConfig.LOOPBACK), ClusterConfig.LOOPBACK, port, null, null)
                    .withServiceDns("localhost");
            IndexerNode first = cluster.start(c -> c.withCluster(settings));
            IndexerNode second = cluster.start(c -> c.withCluster(settings));
            // The second node took the next port (the first holds the one DNS names) and still found the first.
            Await.equal(
                    "both nodes in one cluster",
                    Duration.ofSeconds(30),
                    2,
                    () -> first.hazelcast().getCluster().getMembers().size());
            assertEquals(2, second.hazelcast().getCluster().getMembers().size());
            assertEquals(
                    port,
                    first.hazelcast().getCluster().getLocalMember().getAddress().getPort());
        }
    }

    /** A port whose successor is free too, for the second node. */
    private static int freePortPair() throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getByName(ClusterConfig.LOOPBACK))) {
                int p = a.getLocalPort();
                if (p >= 65535) {
                    continue;
                }
                try (ServerSocket b = new ServerSocket(p + 1, 1, InetAddress.getByName(ClusterConfig.LOOPBACK))) {
                    return p;
                } catch (IOException taken) {
                    // try another
                }
            }
        }
        throw new IOException("no two consecutive free ports");
    }
}
