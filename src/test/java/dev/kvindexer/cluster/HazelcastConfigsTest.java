package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.NetworkConfig;
import dev.kvindexer.config.ClusterSettings;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cluster.xml is valid, bundled, and the flags win over it. */
class HazelcastConfigsTest {
    @Test
    void theBundledClusterXmlLoadsAndTheSettingsOverrideIt() {
        ClusterSettings settings = new ClusterSettings("prod", List.of("10.0.0.1", "10.0.0.2"), "10.0.0.1", 5801, null, null);
        Config c = HazelcastConfigs.load(settings);
        assertEquals("prod", c.getClusterName());
        NetworkConfig n = c.getNetworkConfig();
        assertEquals(5801, n.getPort());
        assertFalse(n.getJoin().getMulticastConfig().isEnabled());
        assertTrue(n.getJoin().getTcpIpConfig().isEnabled());
        assertEquals(List.of("10.0.0.1", "10.0.0.2"), n.getJoin().getTcpIpConfig().getMembers());
        assertEquals(List.of("10.0.0.1"), List.copyOf(n.getInterfaces().getInterfaces()));
        assertEquals("false", c.getProperty("hazelcast.phone.home.enabled"));
        assertNotSame(c, HazelcastConfigs.load(settings), "every node gets its own Config");
    }

    @Test
    void aWildcardHostListensOnEveryInterface() {
        Config c = HazelcastConfigs.load(new ClusterSettings("x", List.of("h"), "0.0.0.0", 5701, null, null));
        assertFalse(c.getNetworkConfig().getInterfaces().isEnabled());
    }

    @Test
    void anOperatorsFileReplacesTheBundledOne(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("hz.xml");
        Files.writeString(file, "<hazelcast xmlns=\"http://www.hazelcast.com/schema/config\"><properties>"
                + "<property name=\"hazelcast.heartbeat.interval.seconds\">3</property></properties></hazelcast>");
        Config c = HazelcastConfigs.load(new ClusterSettings("x", List.of("h"), "127.0.0.1", 5701, null, file.toString()));
        assertEquals("3", c.getProperty("hazelcast.heartbeat.interval.seconds"));
        assertEquals("x", c.getClusterName());
        assertThrows(UncheckedIOException.class, () -> HazelcastConfigs.load(
                new ClusterSettings("x", List.of("h"), "127.0.0.1", 5701, null, dir.resolve("missing.xml").toString())));
    }
}
