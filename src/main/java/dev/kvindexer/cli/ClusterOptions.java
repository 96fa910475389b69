package dev.kvindexer.cli;

import dev.kvindexer.config.ClusterConfig;
import java.time.Duration;
import picocli.CommandLine.Option;

/** {@code serve}'s cluster flags: joining a Hazelcast cluster of replicas or shards, and how its members meet. */
final class ClusterOptions {
    @Option(
            names = "--cluster",
            fallbackValue = "true",
            arity = "0..1",
            description = "Join a Hazelcast cluster of replicas: shared registrations, recovery from members "
                    + "(env KVINDEXER_CLUSTER; default: ${DEFAULT-VALUE}).")
    boolean cluster;

    @Option(
            names = "--cluster-name",
            description = "Hazelcast cluster name; only nodes with the same name join "
                    + "(env KVINDEXER_CLUSTER_NAME; default: ${DEFAULT-VALUE}).")
    String clusterName;

    @Option(
            names = "--cluster-members",
            description = "Comma-separated member hosts for TCP-IP join; no other "
                    + "node can join (env KVINDEXER_CLUSTER_MEMBERS; default: ${DEFAULT-VALUE}).")
    String clusterMembers;

    @Option(
            names = "--cluster-service-dns",
            description = "Find the members by a DNS lookup of this name, e.g. a "
                    + "Kubernetes headless service, instead of --cluster-members; each at --cluster-port "
                    + "(env KVINDEXER_CLUSTER_SERVICE_DNS; default: none).")
    String clusterServiceDns;

    @Option(
            names = "--replication-factor",
            description = "How many nodes hold each shard of a partition (shards "
                    + "split a partition by instance); full: every node holds everything "
                    + "(env KVINDEXER_REPLICATION_FACTOR; default: ${DEFAULT-VALUE}).")
    String replicationFactor;

    @Option(
            names = "--cluster-host",
            description = "Interface for Hazelcast and the event bus, and host of the "
                    + "announced HTTP URL (env KVINDEXER_CLUSTER_HOST; default: ${DEFAULT-VALUE}).")
    String clusterHost;

    @Option(
            names = "--cluster-port",
            description = "First Hazelcast port; the next free one is used when taken "
                    + "(env KVINDEXER_CLUSTER_PORT; default: ${DEFAULT-VALUE}).")
    int clusterPort;

    @Option(
            names = "--cluster-bus-port",
            description = "Port of the event bus between nodes, on the cluster host; "
                    + "0 takes a free one (env KVINDEXER_CLUSTER_BUS_PORT; default: ${DEFAULT-VALUE}).")
    int clusterBusPort;

    @Option(
            names = "--advertise-url",
            description = "HTTP URL other nodes use to reach this one "
                    + "(env KVINDEXER_ADVERTISE_URL; default: http://<cluster-host>:<port>).")
    String advertiseUrl;

    @Option(
            names = "--cluster-config",
            description = "Hazelcast XML to start from "
                    + "(env KVINDEXER_CLUSTER_CONFIG; default: the bundled cluster.xml).")
    String clusterConfig;

    @Option(
            names = "--cluster-reconcile-interval",
            paramLabel = "SECONDS",
            description = "How often a node "
                    + "reconciles all its registrations with the cluster's, besides on joining and on every membership change "
                    + "(env KVINDEXER_CLUSTER_RECONCILE_INTERVAL; default: ${DEFAULT-VALUE}).")
    long clusterReconcileInterval;

    /** The cluster settings asked for, or null when the node runs alone. */
    ClusterConfig settings() {
        int replicas = ClusterConfig.parseReplicationFactor(replicationFactor);
        if (!cluster) {
            if (replicas != ClusterConfig.FULL) {
                throw new IllegalArgumentException(
                        "--replication-factor shards partitions across a cluster: it needs --cluster");
            }
            return null;
        }
        return new ClusterConfig(
                clusterName,
                ServeCommand.commaList(clusterMembers),
                clusterHost,
                clusterPort,
                advertiseUrl,
                clusterConfig,
                Duration.ofSeconds(clusterReconcileInterval),
                clusterBusPort,
                clusterServiceDns,
                replicas);
    }
}
