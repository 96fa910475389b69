package dev.kvindexer.node;

import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.cluster.ClusterMembership;
import dev.kvindexer.cluster.ClusterRegistrar;
import dev.kvindexer.cluster.PeerDirectory;
import dev.kvindexer.cluster.ShardHandover;
import dev.kvindexer.conductor.registry.CppConductorSubscriptions;
import dev.kvindexer.ingest.ZmqIngest;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.NodeMeters;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.recovery.DataDirectory;
import dev.kvindexer.recovery.GapRepair;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.AccessLog;

/**
 * The node's components as assembled. {@code clusterRegistrar}, {@code membership} and {@code hazelcast} are null
 * on a standalone node, {@code accessLog} when none is configured, {@code dataDir} without --data-dir.
 */
record NodeParts(
        EventCounters counters,
        Watermarks watermarks,
        ZmqIngest ingest,
        NodeTopology topology,
        ClusterMembership membership,
        PeerDirectory peers,
        AccessLog accessLog,
        NodeMeters meters,
        HazelcastInstance hazelcast,
        ReadyGate gate,
        DataDirectory dataDir,
        GapRepair gapRepair,
        CppConductorSubscriptions conductor) {
    Registry registry() {
        return topology.registry();
    }

    LocalRegistrar registrations() {
        return topology.local();
    }

    ClusterRegistrar clusterRegistrar() {
        return topology.clusterRegistrar();
    }

    ShardHandover handover() {
        return topology.handover();
    }

    boolean sharded() {
        return topology.shards() != null;
    }
}
