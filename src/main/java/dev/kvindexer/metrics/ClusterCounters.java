package dev.kvindexer.metrics;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a clustered node counts about its cluster: values from other nodes it refused, connections to its cluster
 * ports it closed, and what its full reconciles (anti-entropy) had to change. Empty on a standalone node.
 */
public final class ClusterCounters {
    private final Map<String, LongAdder> rejected = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> refused = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> repairs = new ConcurrentHashMap<>();
    private final LongAdder reconciles = new LongAdder();
    private final LongAdder scattered = new LongAdder();
    private final LongAdder shardRetries = new LongAdder();
    private final LongAdder missingInstances = new LongAdder();
    private final LongAdder shardRebuilds = new LongAdder();

    /** A value read from a cluster map or the event bus was ignored; {@code source} says where, {@code reason} why. */
    public void rejected(String source, String reason) {
        rejected.computeIfAbsent(source + "|" + reason, k -> new LongAdder()).increment();
    }

    /**
     * A connection to a cluster port was closed for what it sent: {@code port} says which (bus, member), {@code reason}
     * why.
     */
    public void refusedConnection(String port, String reason) {
        refused.computeIfAbsent(port + "|" + reason, k -> new LongAdder()).increment();
    }

    /** A full reconcile changed this node's registrations, or the cluster map, in the way {@code action} names. */
    public void repaired(String action) {
        repairs.computeIfAbsent(action, k -> new LongAdder()).increment();
    }

    /** A full reconcile ran to its end. */
    public void reconciled() {
        reconciles.increment();
    }

    /** A query of a sharded partition asked other nodes for the instances this node does not hold. */
    public void scattered() {
        scattered.increment();
    }

    /** A holder asked for instances failed, timed out or did not hold them: they were asked of the next. */
    public void shardRetried() {
        shardRetries.increment();
    }

    /** Instances a query could get from no live node: the answer says so and leaves them out. */
    /** An instance no live node served was rebuilt here from its engine's replay. */
    public void shardRebuilt() {
        shardRebuilds.increment();
    }

    public long shardRebuildCount() {
        return shardRebuilds.sum();
    }

    public void missingInstances(int n) {
        missingInstances.add(n);
    }

    public long scatteredCount() {
        return scattered.sum();
    }

    public long shardRetryCount() {
        return shardRetries.sum();
    }

    public long missingInstanceCount() {
        return missingInstances.sum();
    }

    public long rejectedCount(String source, String reason) {
        LongAdder n = rejected.get(source + "|" + reason);
        return n == null ? 0 : n.sum();
    }

    public long refusedConnectionCount(String port, String reason) {
        LongAdder n = refused.get(port + "|" + reason);
        return n == null ? 0 : n.sum();
    }

    public long repairCount(String action) {
        LongAdder n = repairs.get(action);
        return n == null ? 0 : n.sum();
    }

    public long reconcileCount() {
        return reconciles.sum();
    }

    /** Rejections by {@code source|reason}, sorted. */
    public Map<String, Long> rejectedSnapshot() {
        return snapshot(rejected);
    }

    /** Refused connections by {@code port|reason}, sorted. */
    public Map<String, Long> refusedConnectionSnapshot() {
        return snapshot(refused);
    }

    /** Repairs by action, sorted. */
    public Map<String, Long> repairSnapshot() {
        return snapshot(repairs);
    }

    private static Map<String, Long> snapshot(Map<String, LongAdder> counts) {
        Map<String, Long> out = new TreeMap<>();
        counts.forEach((k, n) -> out.put(k, n.sum()));
        return out;
    }
}
