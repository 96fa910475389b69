package dev.kvindexer.node;

import dev.kvindexer.cluster.ClusterRegistrar;
import dev.kvindexer.cluster.ClusterValues;
import dev.kvindexer.cluster.ShardHandover;
import dev.kvindexer.cluster.ShardPlacement;
import dev.kvindexer.cluster.ShardQueries;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.partition.PartitionHost;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.TracedPartition;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import io.vertx.core.Vertx;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * Where a node's registrations live and how its partitions are reached: standalone, a full replica of a cluster, or
 * one of its shards (then with the placement, the scattered queries and the hand-over). {@code placement},
 * {@code shards} and {@code handover} are null unless sharded, {@code clusterRegistrar} on a standalone node.
 */
record NodeTopology(
        Registry registry,
        LocalRegistrar local,
        ClusterRegistrar clusterRegistrar,
        ShardPlacement placement,
        ShardQueries shards,
        ShardHandover handover) {
    /** How long a scattered query waits for one shard holder before it asks the next. */
    static final Duration SHARD_QUERY_TIMEOUT = Duration.ofSeconds(2);

    /** What /register and /unregister go through: this node, or the whole cluster. */
    Registrar registrar() {
        return clusterRegistrar != null ? clusterRegistrar : local;
    }

    /** Opens the topology {@code config} asks for; a sharded one starts answering other nodes' questions. */
    static NodeTopology open(
            Vertx vertx,
            HazelcastClusterManager manager,
            ServeConfig config,
            PartitionHost partitions,
            ZmqIngest ingest,
            ClusterValues values,
            ClusterCounters counters,
            Spans spans)
            throws Exception {
        UnaryOperator<PartitionRef> traced = spans.on() ? p -> new TracedPartition(p, spans) : UnaryOperator.identity();
        boolean sharded = manager != null && config.cluster().sharded();
        if (!sharded) {
            Registry registry = new Registry(partitions, traced);
            LocalRegistrar local = new LocalRegistrar(registry, partitions, ingest);
            ClusterRegistrar clusterRegistrar =
                    manager == null ? null : new ClusterRegistrar(vertx, manager, local, values, counters);
            return new NodeTopology(registry, local, clusterRegistrar, null, null, null);
        }
        ShardQueries[] shards = {null};
        Registry registry = new Registry(partitions, hosted -> traced.apply(shards[0].view(hosted)));
        ShardPlacement placement = new ShardPlacement(
                manager.getHazelcastInstance(), config.cluster().replicationFactor(), registry::instances);
        LocalRegistrar local = new LocalRegistrar(registry, partitions, ingest, placement::holdsHere);
        ClusterRegistrar clusterRegistrar = new ClusterRegistrar(vertx, manager, local, values, counters);
        shards[0] = new ShardQueries(
                vertx,
                manager,
                registry,
                placement,
                counters,
                SHARD_QUERY_TIMEOUT,
                config.recovery().timeout(),
                config.recovery().maxBytes(),
                config.security().authToken(),
                spans);
        IndexerNode.await(shards[0].start());
        ShardHandover handover = new ShardHandover(
                vertx,
                manager,
                registry,
                local,
                placement,
                shards[0],
                Duration.ofMillis(IndexerNode.SLOW_JOINER_MILLIS));
        if (config.durability().persistent()) {
            handover.deferPasses();
        }
        IndexerNode.await(handover.start());
        return new NodeTopology(registry, local, clusterRegistrar, placement, shards[0], handover);
    }
}
