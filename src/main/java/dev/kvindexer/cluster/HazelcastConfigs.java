package dev.kvindexer.cluster;

import com.hazelcast.config.AdvancedNetworkConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.EndpointConfig;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.ServerSocketEndpointConfig;
import com.hazelcast.config.XmlConfigBuilder;
import com.hazelcast.instance.EndpointQualifier;
import dev.kvindexer.config.ClusterConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Builds a node's Hazelcast {@link Config}: cluster.xml (the repo root's copy is bundled in the jar, or the file given
 * with --cluster-config), then the settings from flags and environment on top. A fresh Config every time: Hazelcast
 * members in one JVM must never share one.
 *
 * <p>Whatever the file says, a member listens for members only, on the cluster host only: no client, REST or memcache
 * endpoint (a Hazelcast client that knows the cluster name could otherwise read and write the registrations), and no
 * wildcard bind unless the cluster host itself is a wildcard. Members are found by the member list, or by a DNS lookup
 * of a Kubernetes headless service. The node's own maps keep a copy on every member (up to
 * Hazelcast's maximum of seven), so losing all members but one loses no registration.
 */
public final class HazelcastConfigs {
    static final String BUNDLED = "cluster.xml";
    /** The maps of {@link ClusterRegistrar} and {@link ClusterMembership}. */
    static final String NODE_MAPS = "kvindexer.*";

    private HazelcastConfigs() {}

    public static Config load(ClusterConfig settings) {
        Config config;
        try (InputStream in = open(settings.configFile())) {
            config = new XmlConfigBuilder(in).build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read Hazelcast config " + settings.configFile(), e);
        }
        config.setClusterName(settings.name());
        // No outbound calls, whatever the file says: our machines have no network beyond the cluster.
        config.setProperty("hazelcast.phone.home.enabled", "false");
        boolean wildcard = settings.host().equals("0.0.0.0") || settings.host().equals("::");
        // Without this Hazelcast binds every interface and only announces the chosen one.
        config.setProperty("hazelcast.socket.bind.any", String.valueOf(wildcard));
        membersOnly(config.getAdvancedNetworkConfig(), settings, wildcard);
        config.addMapConfig(new MapConfig(NODE_MAPS)
                .setBackupCount(MapConfig.MAX_BACKUP_COUNT)
                .setAsyncBackupCount(0));
        return config;
    }

    /**
     * The advanced network is the only way Hazelcast 5 serves members without serving clients on the same port: it
     * opens exactly the endpoints it is given, and we give it the member endpoint alone.
     */
    private static void membersOnly(AdvancedNetworkConfig network, ClusterConfig settings, boolean wildcard) {
        EndpointConfig fromFile = network.getEndpointConfigs().get(EndpointQualifier.MEMBER);
        ServerSocketEndpointConfig member =
                fromFile instanceof ServerSocketEndpointConfig s ? s : new ServerSocketEndpointConfig();
        member.setPort(settings.port()).setPortAutoIncrement(true);
        member.getInterfaces().clear().setEnabled(!wildcard);
        if (!wildcard) {
            member.getInterfaces().addInterface(settings.host());
        }
        network.setEnabled(true);
        network.setEndpointConfigs(Map.of(EndpointQualifier.MEMBER, member));
        JoinConfig join = network.getJoin();
        join.getAutoDetectionConfig().setEnabled(false);
        join.getMulticastConfig().setEnabled(false);
        if (settings.serviceDns() == null) {
            join.getKubernetesConfig().setEnabled(false);
            join.getTcpIpConfig().setEnabled(true).setMembers(settings.members());
            return;
        }
        // Hazelcast's DNS lookup mode: no Kubernetes API access (no service account, no RBAC), just the addresses
        // of a headless service's ready pods, each at the member port every node is started with.
        join.getTcpIpConfig().setEnabled(false);
        join.getKubernetesConfig()
                .setEnabled(true)
                .setProperty("service-dns", settings.serviceDns())
                .setProperty("service-port", String.valueOf(settings.port()));
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
