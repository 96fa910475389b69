package dev.kvindexer.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.registry.Registry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Where the shards of sharded partitions live. A shard is one instance's part of a (model, routing group) partition:
 * a query's answer for an instance depends on that instance's blocks alone. Every node computes the same placement
 * from the same two lists, the cluster's members and its registered instances: each instance goes to the {@code R}
 * members it ranks highest (rendezvous hashing, so an instance or member coming or going moves few others) among
 * those with room, where room is an equal share, so every member holds within one of {@code R × instances / N}
 * instances. Mooncake Stores are held by every node and take no share.
 */
public final class ShardPlacement {
    /** The member attribute under which the Vert.x Hazelcast cluster manager publishes a member's node id. */
    private static final String VERTX_NODE_ID = "__vertx.nodeId";

    private final HazelcastInstance hazelcast;
    private final int replicationFactor;
    private final Supplier<Registry.Instances> instances;
    private volatile Placement placement = new Placement(List.of(), -1, Map.of());
    /** Placements computed so far: moves whenever the members or the instances changed. */
    private final java.util.concurrent.atomic.AtomicLong computed = new java.util.concurrent.atomic.AtomicLong();

    /** The holders of every instance, for one list of members and one version of the instances. */
    private record Placement(List<String> members, long version, Map<Shard, List<String>> holders) {}

    /** One instance's shard. */
    private record Shard(PartitionKey key, long workerId) {}

    /**
     * {@code replicationFactor} {@link ClusterConfig#FULL}: every member holds every shard. {@code instances} lists
     * the cluster's registered instances, as this node's registry holds them.
     */
    public ShardPlacement(HazelcastInstance hazelcast, int replicationFactor, Supplier<Registry.Instances> instances) {
        this.hazelcast = hazelcast;
        this.replicationFactor = replicationFactor;
        this.instances = instances;
    }

    public boolean sharded() {
        return replicationFactor != ClusterConfig.FULL;
    }

    public int replicationFactor() {
        return replicationFactor;
    }

    /**
     * The Vert.x node ids of the members that hold an instance's shard, the first ranked first; fewer than the
     * replication factor while the cluster has fewer members. Every member when not sharded.
     */
    public List<String> holders(PartitionKey key, long workerId) {
        List<String> members = memberIds();
        if (!sharded()) {
            return members;
        }
        Placement p = current(members);
        List<String> placed = p.holders().get(new Shard(key, workerId));
        // An instance this node has not heard of yet (its registration is on its way): its own first choices.
        return placed != null
                ? placed
                : ranked(shardKey(key, workerId), members, Math.min(replicationFactor, members.size()));
    }

    /**
     * Whom to ask for an instance's shard, in order: its holders, then every other live node, never {@code self}.
     */
    public ArrayDeque<String> askOrder(PartitionKey key, long workerId, List<String> liveNodes, String self) {
        LinkedHashSet<String> order = new LinkedHashSet<>(holders(key, workerId));
        order.retainAll(liveNodes);
        order.addAll(liveNodes);
        order.remove(self);
        return new ArrayDeque<>(order);
    }

    /** Whether this member is one of the shard's holders. */
    public boolean holdsHere(PartitionKey key, long workerId) {
        return !sharded() || holders(key, workerId).contains(localId());
    }

    /**
     * As {@link #holdsHere(PartitionKey, long)}, except that every member holds a Mooncake Store: the shared reach of
     * a query is over all of a partition's Stores together, so each node needs them all to answer it exactly.
     */
    public boolean holdsHere(PartitionKey key, long workerId, boolean store) {
        return store || holdsHere(key, workerId);
    }

    /** Runs {@code action} (on a Hazelcast thread) each time a member joins or leaves; returns the registration. */
    public UUID onMembersChanged(Runnable action) {
        return hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(MembershipEvent event) {
                action.run();
            }

            @Override
            public void memberRemoved(MembershipEvent event) {
                action.run();
            }
        });
    }

    public void stopWatching(UUID registration) {
        hazelcast.getCluster().removeMembershipListener(registration);
    }

    /** A number that moves whenever the placement does (members or instances changed). */
    public long stamp() {
        if (!sharded()) {
            return 0;
        }
        current(memberIds());
        return computed.get();
    }

    /** This member's Vert.x node id. */
    public String localId() {
        return nodeId(hazelcast.getCluster().getLocalMember());
    }

    private List<String> memberIds() {
        List<String> out = new ArrayList<>();
        hazelcast.getCluster().getMembers().forEach(m -> out.add(nodeId(m)));
        out.sort(Comparator.naturalOrder());
        return out;
    }

    /** The placement for {@code members} and the instances now, computed again only when either changed. */
    private Placement current(List<String> members) {
        Placement p = placement;
        Registry.Instances now = instances.get();
        if (p.version() == now.version() && p.members().equals(members)) {
            return p;
        }
        p = new Placement(members, now.version(), place(now.all(), members, replicationFactor));
        placement = p;
        computed.incrementAndGet();
        return p;
    }

    /**
     * Each sharded instance's holders: {@code r} distinct members, each member holding its equal share (the first
     * members by rank of a fixed key take the remainder, one more each). Instances are placed in the order of their
     * own hash; each takes the members it ranks highest that have room, after any member that must take it for the
     * rest to fit (one whose room equals the instances left). So every member ends at exactly its share.
     */
    static Map<Shard, List<String>> place(List<Registry.Instance> all, List<String> members, int r) {
        Map<Shard, List<String>> out = new HashMap<>();
        int n = members.size();
        if (n == 0) {
            return out;
        }
        int holdersEach = Math.min(r, n);
        List<String> keys = new ArrayList<>();
        Map<String, Shard> shards = new HashMap<>();
        for (Registry.Instance i : all) {
            if (!i.store()) {
                String key = shardKey(i.key(), i.workerId());
                keys.add(key);
                shards.put(key, new Shard(i.key(), i.workerId()));
            }
        }
        keys.sort(Comparator.comparingLong(ShardPlacement::hash).thenComparing(Comparator.naturalOrder()));
        long slots = (long) holdersEach * keys.size();
        List<String> byRemainder = ranked("kvindexer.shard.remainder", members, n);
        Map<String, Long> room = new HashMap<>();
        for (int m = 0; m < n; m++) {
            room.put(byRemainder.get(m), slots / n + (m < slots % n ? 1 : 0));
        }
        int left = keys.size();
        for (String key : keys) {
            List<String> chosen = new ArrayList<>(holdersEach);
            for (String m : members) {
                if (room.get(m) >= left) {
                    chosen.add(m);
                }
            }
            for (String m : ranked(key, members, n)) {
                if (chosen.size() == holdersEach) {
                    break;
                }
                if (room.get(m) > 0 && !chosen.contains(m)) {
                    chosen.add(m);
                }
            }
            chosen.sort(Comparator.comparingLong(m -> -score(key, m)));
            for (String m : chosen) {
                room.merge(m, -1L, Long::sum);
            }
            out.put(shards.get(key), List.copyOf(chosen));
            left--;
        }
        return out;
    }

    /** The first {@code count} of {@code members} in the order {@code key} ranks them (rendezvous hashing). */
    static List<String> ranked(String key, List<String> members, int count) {
        List<String> order = new ArrayList<>(members);
        order.sort(Comparator.comparingLong((String m) -> -score(key, m)).thenComparing(Comparator.naturalOrder()));
        return List.copyOf(order.subList(0, Math.min(count, order.size())));
    }

    private static long score(String key, String member) {
        return hash(key + '\u0000' + member);
    }

    /** A stable 64-bit hash of a string (FNV-1a, then a finalizer): the same on every node and JVM. */
    static long hash(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return h;
    }

    /** The Vert.x cluster manager names a member by an attribute of its own, not by the Hazelcast member UUID. */
    private static String nodeId(Member m) {
        String id = m.getAttribute(VERTX_NODE_ID);
        return id != null ? id : m.getUuid().toString();
    }

    /** NUL cannot occur in a model name or routing group taken from JSON keys, so the fields cannot run together. */
    static String shardKey(PartitionKey key, long workerId) {
        return "kvindexer.shard\u0000" + key.modelName() + '\u0000' + key.routingGroup() + '\u0000'
                + Long.toUnsignedString(workerId);
    }
}
