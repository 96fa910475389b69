package dev.kvindexer.support;

import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * Real clustered nodes in this JVM on loopback, in a cluster of their own: a random name, and member ports of their
 * own, as the test JVMs of a build run side by side and a member looks for the others among the ports after its first.
 */
public final class ClusterNodes implements AutoCloseable {
    /** Member ports a cluster may take: Hazelcast tries this many from the first when it looks for members. */
    public static final int PORTS = 10;

    private final String name = "kvindexer-test-" + UUID.randomUUID();
    private final int port = FreePort.block(PORTS);
    private final List<IndexerNode> running = new ArrayList<>();

    public ServeConfig config() {
        return ServeConfig.local(0).withCluster(settings());
    }

    /** How a member of this cluster joins it. */
    public ClusterConfig settings() {
        return new ClusterConfig(name, List.of(ClusterConfig.LOOPBACK), ClusterConfig.LOOPBACK, port, null, null);
    }

    /** The random cluster name these nodes share. */
    public String name() {
        return name;
    }

    /**
     * The command-line flags that make a child process a member of this cluster (on loopback, reconciling every
     * second).
     */
    public List<String> childFlags() {
        return List.of(
                "--cluster",
                "--cluster-name",
                name,
                "--cluster-members",
                ClusterConfig.LOOPBACK,
                "--cluster-host",
                ClusterConfig.LOOPBACK,
                "--cluster-port",
                Integer.toString(port),
                "--cluster-reconcile-interval",
                "1");
    }

    /** Starts a node; returns once it has joined, subscribed to every registered worker, recovered and opened its gate. */
    public IndexerNode start() throws Exception {
        return start(UnaryOperator.identity());
    }

    /** Starts a node with its configuration adjusted (a token, a shorter reconcile interval). */
    public IndexerNode start(UnaryOperator<ServeConfig> adjust) throws Exception {
        IndexerNode node = IndexerNode.start(adjust.apply(config()));
        synchronized (running) {
            running.add(node);
        }
        return node;
    }

    /** Stops a node the way an operator does (it leaves the cluster). */
    public void stop(IndexerNode node) {
        synchronized (running) {
            running.remove(node);
        }
        node.close();
    }

    @Override
    public void close() {
        List<IndexerNode> all;
        synchronized (running) {
            all = new ArrayList<>(running);
            running.clear();
        }
        all.forEach(IndexerNode::close);
    }
}
