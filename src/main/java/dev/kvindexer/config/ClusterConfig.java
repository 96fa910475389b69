package dev.kvindexer.config;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * How a node joins its Hazelcast cluster ({@code serve --cluster}).
 *
 * @param name         Hazelcast cluster name; nodes with another name never join, so a stray node stays out
 * @param members      TCP-IP join members (bare hosts or host:port; Hazelcast tries the ports after each)
 * @param host         interface for Hazelcast and the event bus, and the host of the announced HTTP URL
 * @param port         first Hazelcast port; the next free one is taken when it is in use
 * @param advertiseUrl HTTP URL other nodes recover from, or null for {@code http://host:<http port>}
 * @param configFile   Hazelcast XML to start from, or null for the cluster.xml bundled from the repo root
 * @param reconcileInterval how often a node reconciles all its registrations with the cluster map (besides on join
 *                          and on every membership change); at most {@link #MAX_RECONCILE_INTERVAL}, which keeps it
 *                          far below how long an unregistration's tombstone lasts
 * @param busPort      port of the Vert.x event bus between nodes, on {@code host}; 0 takes a free one at startup
 * @param serviceDns   a DNS name whose addresses are the members (a Kubernetes headless service), found by Hazelcast's
 *                     own lookup, each at {@code port}; null joins by {@code members} instead
 * @param replicationFactor how many nodes hold each shard of a partition ({@link #FULL}: every node holds all)
 */
public record ClusterConfig(
        String name,
        List<String> members,
        String host,
        int port,
        String advertiseUrl,
        String configFile,
        Duration reconcileInterval,
        int busPort,
        String serviceDns,
        int replicationFactor) {
    public static final String DEFAULT_NAME = "kvindexer";
    public static final String LOOPBACK = "127.0.0.1";
    public static final int DEFAULT_PORT = 5701;
    public static final Duration DEFAULT_RECONCILE_INTERVAL = Duration.ofSeconds(10);
    public static final Duration MAX_RECONCILE_INTERVAL = Duration.ofMinutes(5);
    /** Replication factor of a cluster of full replicas: every node holds every shard. */
    public static final int FULL = 0;
    /** Hazelcast's partition table names at most this many replicas of a partition. */
    public static final int MAX_REPLICATION_FACTOR = 7;

    /** With the default reconcile interval and an event-bus port picked at startup. */
    public ClusterConfig(
            String name, List<String> members, String host, int port, String advertiseUrl, String configFile) {
        this(name, members, host, port, advertiseUrl, configFile, DEFAULT_RECONCILE_INTERVAL, 0, null, FULL);
    }

    public ClusterConfig {
        members = List.copyOf(members);
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("--cluster-name must not be empty");
        }
        if (members.isEmpty()) {
            throw new IllegalArgumentException("--cluster-members must name at least one member");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("--cluster-port must be 1-65535, got " + port);
        }
        if (reconcileInterval == null
                || reconcileInterval.isNegative()
                || reconcileInterval.isZero()
                || reconcileInterval.compareTo(MAX_RECONCILE_INTERVAL) > 0) {
            throw new IllegalArgumentException("--cluster-reconcile-interval must be from 1 to "
                    + MAX_RECONCILE_INTERVAL.toSeconds() + " seconds, got " + reconcileInterval);
        }
        if (busPort < 0 || busPort > 65535) {
            throw new IllegalArgumentException("--cluster-bus-port must be 0-65535, got " + busPort);
        }
        if (serviceDns != null && (serviceDns.isBlank() || serviceDns.chars().anyMatch(Character::isWhitespace))) {
            throw new IllegalArgumentException("--cluster-service-dns must be a DNS name, got '" + serviceDns + "'");
        }
        if (replicationFactor < FULL || replicationFactor > MAX_REPLICATION_FACTOR) {
            throw new IllegalArgumentException(
                    "--replication-factor must be full or 1-" + MAX_REPLICATION_FACTOR + ", got " + replicationFactor);
        }
    }

    /** Whether partitions are split into shards held by {@link #replicationFactor} nodes each. */
    public boolean sharded() {
        return replicationFactor != FULL;
    }

    /** "full", or a number of nodes per shard, as {@code --replication-factor} takes it. */
    public static int parseReplicationFactor(String value) {
        if (value == null || value.isBlank() || value.trim().equalsIgnoreCase("full")) {
            return FULL;
        }
        try {
            int r = Integer.parseInt(value.trim());
            if (r >= 1) {
                return r;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                "--replication-factor must be full or 1-" + MAX_REPLICATION_FACTOR + ", got '" + value + "'");
    }

    public ClusterConfig withReconcileInterval(Duration interval) {
        return with(c -> c.reconcileInterval = interval);
    }

    /** Members found by a DNS lookup of {@code dns} (null: by the member list). */
    public ClusterConfig withServiceDns(String dns) {
        return with(c -> c.serviceDns = dns);
    }

    /** Each shard on {@code r} nodes ({@link #FULL}: every node holds everything). */
    public ClusterConfig withReplicationFactor(int r) {
        return with(c -> c.replicationFactor = r);
    }

    /** A cluster on this machine only, as tests and the README's three-node example use it. */
    public static ClusterConfig loopback(String name) {
        return new ClusterConfig(name, List.of(LOOPBACK), LOOPBACK, DEFAULT_PORT, null, null);
    }

    /** Every field once, for the withers: each wither names only what it changes. */
    private static final class Copy {
        private String name;
        private List<String> members;
        private String host;
        private int port;
        private String advertiseUrl;
        private String configFile;
        private Duration reconcileInterval;
        private int busPort;
        private String serviceDns;
        private int replicationFactor;

        private Copy(ClusterConfig c) {
            name = c.name;
            members = c.members;
            host = c.host;
            port = c.port;
            advertiseUrl = c.advertiseUrl;
            configFile = c.configFile;
            reconcileInterval = c.reconcileInterval;
            busPort = c.busPort;
            serviceDns = c.serviceDns;
            replicationFactor = c.replicationFactor;
        }

        private ClusterConfig build() {
            return new ClusterConfig(
                    name,
                    members,
                    host,
                    port,
                    advertiseUrl,
                    configFile,
                    reconcileInterval,
                    busPort,
                    serviceDns,
                    replicationFactor);
        }
    }

    /** These settings with {@code change} made to a copy of them. */
    private ClusterConfig with(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.build();
    }
}
