package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.AdvancedNetworkConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.ServerSocketEndpointConfig;
import com.hazelcast.instance.EndpointQualifier;
import dev.kvindexer.config.ClusterConfig;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cluster.xml is valid, bundled, and the flags win over it; a member serves members only, on the cluster host only. */
class HazelcastConfigsTest {
    private static ServerSocketEndpointConfig memberEndpoint(Config c) {
        return (ServerSocketEndpointConfig)
                c.getAdvancedNetworkConfig().getEndpointConfigs().get(EndpointQualifier.MEMBER);
    }

    @Test
    void theBundledClusterXmlLoadsAndTheSettingsOverrideIt() {
        ClusterConfig settings =
                new ClusterConfig("prod", List.of("10.0.0.1", "10.0.0.2"), "10.0.0.1", 5801, null, null);
        Config c = HazelcastConfigs.load(settings);
        assertEquals("prod", c.getClusterName());
        AdvancedNetworkConfig n = c.getAdvancedNetworkConfig();
        assertTrue(n.isEnabled());
        ServerSocketEndpointConfig member = memberEndpoint(c);
        assertEquals(5801, member.getPort());
        JoinConfig join = n.getJoin();
        assertFalse(join.getMulticastConfig().isEnabled());
        assertTrue(join.getTcpIpConfig().isEnabled());
        assertEquals(List.of("10.0.0.1", "10.0.0.2"), join.getTcpIpConfig().getMembers());
        assertEquals(List.of("10.0.0.1"), List.copyOf(member.getInterfaces().getInterfaces()));
        assertEquals("false", c.getProperty("hazelcast.socket.bind.any"));
        assertEquals("false", c.getProperty("hazelcast.phone.home.enabled"));
        assertEquals(
                Set.of(EndpointQualifier.MEMBER),
                n.getEndpointConfigs().keySet(),
                "no client, REST or memcache endpoint");
        MapConfig registrations = c.getMapConfig(ClusterRegistrar.MAP);
        assertEquals(MapConfig.MAX_BACKUP_COUNT, registrations.getBackupCount(), "a copy on every member");
        assertEquals(
                MapConfig.MAX_BACKUP_COUNT,
                c.getMapConfig(ClusterRegistrar.TOMBSTONES).getBackupCount());
        assertEquals(
                MapConfig.MAX_BACKUP_COUNT,
                c.getMapConfig(ClusterMembership.MAP).getBackupCount());
        assertNotSame(c, HazelcastConfigs.load(settings), "every node gets its own Config");
    }

    @Test
    void aWildcardHostListensOnEveryInterface() {
        Config c = HazelcastConfigs.load(new ClusterConfig("x", List.of("h"), "0.0.0.0", 5701, null, null));
        assertFalse(memberEndpoint(c).getInterfaces().isEnabled());
        assertEquals("true", c.getProperty("hazelcast.socket.bind.any"));
    }

    @Test
    void anOperatorsFileReplacesTheBundledOneButCannotOpenAClientEndpoint(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("hz.xml");
        Files.writeString(
                file,
                "<hazelcast xmlns=\"http://www.hazelcast.com/schema/config\"><properties>"
                        + "<property name=\"hazelcast.heartbeat.interval.seconds\">3</property></properties>"
                        + "<advanced-network enabled=\"true\"><member-server-socket-endpoint-config>"
                        + "<socket-options><keep-alive>false</keep-alive></socket-options></member-server-socket-endpoint-config>"
                        + "<client-server-socket-endpoint-config><port>9090</port></client-server-socket-endpoint-config>"
                        + "</advanced-network></hazelcast>");
        Config c =
                HazelcastConfigs.load(new ClusterConfig("x", List.of("h"), "127.0.0.1", 5701, null, file.toString()));
        assertEquals("3", c.getProperty("hazelcast.heartbeat.interval.seconds"));
        assertEquals("x", c.getClusterName());
        assertEquals(
                Set.of(EndpointQualifier.MEMBER),
                c.getAdvancedNetworkConfig().getEndpointConfigs().keySet());
        assertFalse(memberEndpoint(c).isSocketKeepAlive(), "the file's member socket options stay");
        assertThrows(
                UncheckedIOException.class,
                () -> HazelcastConfigs.load(new ClusterConfig(
                        "x",
                        List.of("h"),
                        "127.0.0.1",
                        5701,
                        null,
                        dir.resolve("missing.xml").toString())));
    }
}
