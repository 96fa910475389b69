package dev.kvindexer.support;

import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.config.ClusterSettings;
import dev.kvindexer.config.ServeConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.UnaryOperator;

/** Real clustered nodes in this JVM on loopback, in a cluster of their own (random name); closed together. */
public final class ClusterNodes implements AutoCloseable {
    private final String name = "kvindexer-test-" + UUID.randomUUID();
    private final List<IndexerNode> running = new ArrayList<>();

    public ServeConfig config() {
        return ServeConfig.local(0).withCluster(ClusterSettings.loopback(name));
    }

    /** The random cluster name these nodes share. */
    public String name() {
        return name;
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
