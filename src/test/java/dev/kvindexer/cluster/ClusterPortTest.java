package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.ClusterNodes;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Hazelcast port of a node with {@code --cluster-host 127.0.0.1}: bound to that address alone, and speaking the
 * member protocol only, so a Hazelcast client that knows the cluster name gets nowhere near the registrations.
 */
class ClusterPortTest {
    private final ClusterNodes cluster = new ClusterNodes();

    @AfterEach
    void stop() {
        cluster.close();
    }

    private static int memberPort(IndexerNode node) {
        return node.hazelcast().getCluster().getLocalMember().getAddress().getPort();
    }

    /** Every IPv4 address of this machine but 127.0.0.1: loopback aliases answer for any 127/8 address on Linux. */
    private static List<InetAddress> otherLocalAddresses() throws IOException {
        List<InetAddress> out = new ArrayList<>(List.of(InetAddress.getByName("127.0.0.2")));
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (nic.isUp()) {
                Collections.list(nic.getInetAddresses()).stream()
                        .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
                        .forEach(out::add);
            }
        }
        return out;
    }

    @Test
    void theMemberPortAcceptsOnTheClusterHostOnly() throws Exception {
        int port = memberPort(cluster.start());
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            assertTrue(s.isConnected(), "the port is the member's");
        }
        for (InetAddress other : otherLocalAddresses()) {
            try (Socket s = new Socket()) {
                assertThrows(
                        ConnectException.class,
                        () -> s.connect(new InetSocketAddress(other, port), 2_000),
                        "port " + port + " must not accept on " + other.getHostAddress());
            }
        }
    }

    @Test
    void aHazelcastClientWithTheClusterNameCannotConnect() throws Exception {
        IndexerNode node = cluster.start();
        ClientConfig config = new ClientConfig();
        config.setClusterName(cluster.name());
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.getNetworkConfig().addAddress("127.0.0.1:" + memberPort(node));
        config.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(2_000);
        HazelcastInstance client = null;
        try {
            client = HazelcastClient.newHazelcastClient(config);
            fail("a client connected and sees "
                    + client.getMap(ClusterRegistrar.MAP).size() + " registrations");
        } catch (IllegalStateException refused) {
            assertTrue(refused.getMessage().contains("Unable to connect"), refused.getMessage());
        } finally {
            if (client != null) {
                client.shutdown();
            }
        }
        assertEquals(1, node.hazelcast().getCluster().getMembers().size());
        assertFalse(node.hazelcast()
                .getClientService()
                .getConnectedClients()
                .iterator()
                .hasNext());
    }
}
