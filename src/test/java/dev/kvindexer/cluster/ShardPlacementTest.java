package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Shard placement: R distinct holders an instance, every member within one of its equal share, the same on every
 * member whatever order it heard of the instances in, few moves when an instance or a member comes; and members of a
 * real Hazelcast cluster agree.
 */
class ShardPlacementTest {
    private static final PartitionKey KEY = new PartitionKey("llama", "default");

    private final List<HazelcastInstance> members = new ArrayList<>();

    @AfterEach
    void stop() {
        members.forEach(HazelcastInstance::shutdown);
    }

    private List<HazelcastInstance> cluster(int n) {
        ClusterConfig settings = new ClusterNodes().settings();
        for (int i = 0; i < n; i++) {
            members.add(Hazelcast.newHazelcastInstance(HazelcastConfigs.load(settings)));
        }
        Await.equal(
                "members",
                Duration.ofSeconds(30),
                n,
                () -> members.get(0).getCluster().getMembers().size());
        members.get(0).getPartitionService().getPartitions().forEach(p -> p.getOwner());
        Await.until(
                "partitions assigned and migrated",
                Duration.ofSeconds(30),
                () -> members.stream()
                        .allMatch(m -> m.getPartitionService().isClusterSafe()
                                && m.getPartitionService().getPartitions().stream()
                                        .allMatch(p -> p.getOwner() != null)));
        return members;
    }

    /** Instances 0..count-1 of one partition, with every {@code storeEvery}-th a Mooncake Store (0: none). */
    private static List<Registry.Instance> instances(int count, int storeEvery) {
        List<Registry.Instance> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(new Registry.Instance(KEY, 1000 + i, storeEvery > 0 && i % storeEvery == 0));
        }
        return out;
    }

    private static List<String> members(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("node-" + i);
        }
        return out;
    }

    @Test
    void everyMemberHoldsItsEqualShareWithinOneAndEachShardRDistinctHolders() {
        for (int n = 1; n <= 6; n++) {
            for (int r = 1; r <= 3; r++) {
                for (int count : new int[] {0, 1, 2, 5, 6, 7, 31, 100}) {
                    List<Registry.Instance> all = instances(count, 0);
                    Map<?, List<String>> placed = ShardPlacement.place(all, members(n), r);
                    int each = Math.min(r, n);
                    Map<String, Integer> load = new HashMap<>();
                    for (List<String> holders : placed.values()) {
                        assertEquals(each, holders.size());
                        assertEquals(each, new HashSet<>(holders).size(), "distinct members");
                        holders.forEach(m -> load.merge(m, 1, Integer::sum));
                    }
                    assertEquals(count, placed.size());
                    double share = (double) each * count / n;
                    for (String m : members(n)) {
                        int held = load.getOrDefault(m, 0);
                        assertTrue(
                                Math.abs(held - share) < 1,
                                "N=" + n + " R=" + r + " instances=" + count + ": " + m + " holds " + held);
                    }
                }
            }
        }
    }

    @Test
    void theIssuesThreeNodesTwoReplicasAndSixEnginesGiveEachNodeFour() {
        Map<?, List<String>> placed = ShardPlacement.place(instances(6, 0), members(3), 2);
        Map<String, Integer> load = new HashMap<>();
        placed.values().forEach(h -> h.forEach(m -> load.merge(m, 1, Integer::sum)));
        assertEquals(Map.of("node-0", 4, "node-1", 4, "node-2", 4), load);
    }

    @Test
    void everyNodeComputesTheSamePlacementWhateverOrderItHeardOfThem() {
        List<Registry.Instance> all = instances(50, 7);
        Map<?, List<String>> placed = ShardPlacement.place(all, members(4), 2);
        List<Registry.Instance> shuffled = new ArrayList<>(all);
        Collections.shuffle(shuffled, new Random(3));
        assertEquals(placed, ShardPlacement.place(shuffled, members(4), 2));
        assertEquals(50 - 8, placed.size(), "Stores are held everywhere and take no share");
    }

    @Test
    void anInstanceOrAMemberMoreMovesFewOthers() {
        List<Registry.Instance> all = instances(200, 0);
        Map<?, List<String>> before = ShardPlacement.place(all, members(5), 2);
        List<Registry.Instance> more = new ArrayList<>(all);
        more.add(new Registry.Instance(KEY, 5000, false));
        Map<?, List<String>> after = ShardPlacement.place(more, members(5), 2);
        assertTrue(moved(before, after) <= 20, moved(before, after) + " of 200 moved for one more instance");
        Map<?, List<String>> sixMembers = ShardPlacement.place(all, members(6), 2);
        // A sixth member takes a sixth of the copies: each instance that moves at least one to it.
        assertTrue(
                moved(before, sixMembers) <= 200 / 6 * 2 + 20,
                moved(before, sixMembers) + " of 200 moved for a sixth member");
    }

    private static int moved(Map<?, List<String>> a, Map<?, List<String>> b) {
        int n = 0;
        for (Map.Entry<?, List<String>> e : a.entrySet()) {
            if (!new HashSet<>(e.getValue()).equals(new HashSet<>(b.get(e.getKey())))) {
                n++;
            }
        }
        return n;
    }

    @Test
    void membersOfARealClusterAgreeOnEveryHolder() {
        List<HazelcastInstance> hz = cluster(3);
        List<Registry.Instance> all = instances(30, 0);
        Supplier<Registry.Instances> registered = () -> new Registry.Instances(1, all);
        int[] held = new int[3];
        for (Registry.Instance i : all) {
            List<String> holders = new ShardPlacement(hz.get(0), 2, registered).holders(KEY, i.workerId());
            for (int m = 0; m < 3; m++) {
                ShardPlacement p = new ShardPlacement(hz.get(m), 2, registered);
                assertEquals(holders, p.holders(KEY, i.workerId()), "every member places a shard alike");
                if (p.holdsHere(KEY, i.workerId())) {
                    held[m]++;
                }
            }
        }
        assertArrayEquals(new int[] {20, 20, 20}, held, "each holds 2 x 30 / 3");
    }

    @Test
    void theShardKeyKeepsModelRoutingGroupAndInstanceApart() {
        assertTrue(!ShardPlacement.shardKey(new PartitionKey("a", "bc"), 1)
                .equals(ShardPlacement.shardKey(new PartitionKey("ab", "c"), 1)));
        assertTrue(!ShardPlacement.shardKey(new PartitionKey("a", "b"), 12)
                .equals(ShardPlacement.shardKey(new PartitionKey("a", "b1"), 2)));
    }
}
