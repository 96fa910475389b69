package dev.kvindexer.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.XmlConfigBuilder;
import dev.kvindexer.config.ClusterSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Builds a node's Hazelcast {@link Config}: cluster.xml (the repo root's copy is bundled in the jar, or the file given
 * with --cluster-config), then the settings from flags and environment on top. A fresh Config every time: Hazelcast
 * members in one JVM must never share one.
 */
public final class HazelcastConfigs {
    static final String BUNDLED = "cluster.xml";

    private HazelcastConfigs() {
    }

    public static Config load(ClusterSettings settings) {
        Config config;
        try (InputStream in = open(settings.configFile())) {
            config = new XmlConfigBuilder(in).build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read Hazelcast config " + settings.configFile(), e);
        }
        config.setClusterName(settings.name());
        // No outbound calls, whatever the file says: our machines have no network beyond the cluster.
        config.setProperty("hazelcast.phone.home.enabled", "false");
        NetworkConfig network = config.getNetworkConfig();
        network.setPort(settings.port()).setPortAutoIncrement(true);
        network.getJoin().getMulticastConfig().setEnabled(false);
        network.getJoin().getTcpIpConfig().setEnabled(true).setMembers(settings.members());
        boolean wildcard = settings.host().equals("0.0.0.0") || settings.host().equals("::");
        network.getInterfaces().clear().setEnabled(!wildcard);
        if (!wildcard) {
            network.getInterfaces().addInterface(settings.host());
        }
        return config;
    }

    private static InputStream open(String file) throws IOException {
        if (file != null) {
            return Files.newInputStream(Path.of(file));
        }
        InputStream in = HazelcastConfigs.class.getClassLoader().getResourceAsStream(BUNDLED);
        if (in == null) {
            throw new IOException(BUNDLED + " is not on the classpath");
        }
        return in;
    }
}
