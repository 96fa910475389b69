package dev.kvindexer.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.internal.partition.InternalPartition;
import com.hazelcast.internal.partition.PartitionReplica;
import com.hazelcast.partition.MigrationListener;
import com.hazelcast.partition.MigrationState;
import com.hazelcast.partition.ReplicaMigrationEvent;
import dev.kvindexer.config.ClusterSettings;
import dev.kvindexer.event.PartitionKey;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Where the shards of sharded partitions live. A shard is one instance's part of a (model, routing group) partition:
 * a query's answer for an instance depends on that instance's blocks alone. Its Hazelcast partition is that of the
 * key (model, group, instance), and its holders are the first {@code R} replicas Hazelcast's partition table names for
 * it (owner, then backups), so placement follows Hazelcast's own balancing and migrations instead of a ring of ours.
 */
public final class ShardPlacement {
    /** The member attribute under which the Vert.x Hazelcast cluster manager publishes a member's node id. */
    private static final String VERTX_NODE_ID = "__vertx.nodeId";

    private final HazelcastInstance hazelcast;
    private final int replicationFactor;

    /** {@code replicationFactor} {@link ClusterSettings#FULL}: every member holds every shard. */
    public ShardPlacement(HazelcastInstance hazelcast, int replicationFactor) {
        this.hazelcast = hazelcast;
        this.replicationFactor = replicationFactor;
    }

    public boolean sharded() {
        return replicationFactor != ClusterSettings.FULL;
    }

    public int replicationFactor() {
        return replicationFactor;
    }

    /** The Hazelcast partition id the instance's shard of {@code key} lives in. */
    public int shardOf(PartitionKey key, long workerId) {
        return hazelcast
                .getPartitionService()
                .getPartition(shardKey(key, workerId))
                .getPartitionId();
    }

    /**
     * The Vert.x node ids of the members that hold a shard, owner first; fewer than
     * the replication factor while the cluster has fewer members or is assigning replicas. Every member when not
     * sharded.
     */
    public List<String> holders(int shard) {
        List<String> out = new ArrayList<>();
        if (!sharded()) {
            hazelcast.getCluster().getMembers().forEach(m -> out.add(nodeId(m)));
            return out;
        }
        Map<UUID, String> nodeIds = new HashMap<>();
        hazelcast.getCluster().getMembers().forEach(m -> nodeIds.put(m.getUuid(), nodeId(m)));
        InternalPartition partition = table(shard);
        if (partition.getReplica(0) == null) {
            // Hazelcast arranges its partitions on first use; asking for an owner has the master do it.
            hazelcast.getPartitionService().getPartitions().iterator().next().getOwner();
        }
        for (int replica = 0; replica < replicationFactor && replica < InternalPartition.MAX_REPLICA_COUNT; replica++) {
            PartitionReplica r = partition.getReplica(replica);
            String id = r == null ? null : nodeIds.get(r.uuid());
            if (id != null) {
                out.add(id);
            }
        }
        return out;
    }

    /**
     * Whom to ask for an instance's shard, in order: its holders as the table names them, then every other live node,
     * never {@code self}.
     */
    public ArrayDeque<String> askOrder(PartitionKey key, long workerId, List<String> liveNodes, String self) {
        LinkedHashSet<String> order = new LinkedHashSet<>(holders(shardOf(key, workerId)));
        order.retainAll(liveNodes);
        order.addAll(liveNodes);
        order.remove(self);
        return new ArrayDeque<>(order);
    }

    /** Whether this member is one of the shard's holders. */
    public boolean holdsHere(PartitionKey key, long workerId) {
        return !sharded() || holders(shardOf(key, workerId)).contains(localId());
    }

    /**
     * As {@link #holdsHere(PartitionKey, long)}, except that every member holds a Mooncake Store: the shared reach of
     * a query is over all of a partition's Stores together, so each node needs them all to answer it exactly.
     */
    public boolean holdsHere(PartitionKey key, long workerId, boolean store) {
        return store || holdsHere(key, workerId);
    }

    /**
     * Runs {@code action} (on a Hazelcast thread) each time a round of migrations of the partition table ends, that is
     * when shards have new holders; returns the registration for {@link #stopWatching}.
     */
    public UUID onMigrations(Runnable action) {
        return hazelcast.getPartitionService().addMigrationListener(new MigrationListener() {
            @Override
            public void migrationStarted(MigrationState state) {}

            @Override
            public void migrationFinished(MigrationState state) {
                action.run();
            }

            @Override
            public void replicaMigrationCompleted(ReplicaMigrationEvent event) {}

            @Override
            public void replicaMigrationFailed(ReplicaMigrationEvent event) {}
        });
    }

    public void stopWatching(UUID registration) {
        hazelcast.getPartitionService().removeMigrationListener(registration);
    }

    /** This member's Vert.x node id. */
    public String localId() {
        return nodeId(hazelcast.getCluster().getLocalMember());
    }

    /** The Vert.x cluster manager names a member by an attribute of its own, not by the Hazelcast member UUID. */
    private static String nodeId(Member m) {
        String id = m.getAttribute(VERTX_NODE_ID);
        return id != null ? id : m.getUuid().toString();
    }

    /**
     * Hazelcast's public API names a partition's owner only; the backups are in the member's internal partition table,
     * which every member keeps whole.
     */
    private InternalPartition table(int shard) {
        HazelcastInstanceProxy proxy = (HazelcastInstanceProxy) hazelcast;
        return proxy.getOriginal().node.getPartitionService().getPartition(shard);
    }

    /** NUL cannot occur in a model name or routing group taken from JSON keys, so the fields cannot run together. */
    static String shardKey(PartitionKey key, long workerId) {
        return "kvindexer.shard\u0000" + key.modelName() + '\u0000' + key.routingGroup() + '\u0000'
                + Long.toUnsignedString(workerId);
    }
}
