package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.config.ClusterSettings;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Shard holders come from a real three-member Hazelcast partition table: R distinct members, spread evenly. */
class ShardPlacementTest {
    private final List<HazelcastInstance> members = new ArrayList<>();

    @AfterEach
    void stop() {
        members.forEach(HazelcastInstance::shutdown);
    }

    private List<HazelcastInstance> cluster(int n) {
        ClusterSettings settings = new ClusterNodes().settings();
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

    @Test
    void eachShardHasRDistinctHoldersAndEveryMemberHoldsItsShare() {
        List<HazelcastInstance> hz = cluster(3);
        PartitionKey key = new PartitionKey("llama", "default");
        int shards = 3000;
        for (int r : new int[] {1, 2, 3}) {
            ShardPlacement first = new ShardPlacement(hz.get(0), r);
            ShardPlacement other = new ShardPlacement(hz.get(2), r);
            int[] held = new int[3];
            for (long worker = 0; worker < shards; worker++) {
                int shard = first.shardOf(key, worker);
                assertEquals(shard, other.shardOf(key, worker), "every member places a shard alike");
                List<String> holders = first.holders(shard);
                assertEquals(holders, other.holders(shard), "every member reads the same table");
                assertEquals(r, holders.size());
                assertEquals(r, new HashSet<>(holders).size(), "distinct members");
                for (int m = 0; m < 3; m++) {
                    if (new ShardPlacement(hz.get(m), r).holdsHere(key, worker)) {
                        held[m]++;
                    }
                }
            }
            for (int m = 0; m < 3; m++) {
                double share = held[m] / (double) shards;
                assertTrue(Math.abs(share - r / 3.0) < 0.1, "R=" + r + " member " + m + " holds " + share);
            }
        }
    }

    @Test
    void fullReplicationHoldsEverythingEverywhere() {
        List<HazelcastInstance> hz = cluster(2);
        ShardPlacement full = new ShardPlacement(hz.get(1), ClusterSettings.FULL);
        PartitionKey key = new PartitionKey("m", "g");
        Set<String> all = new HashSet<>();
        hz.forEach(h -> all.add(h.getCluster().getLocalMember().getUuid().toString()));
        for (long worker = 0; worker < 50; worker++) {
            assertTrue(full.holdsHere(key, worker));
            assertEquals(all, new HashSet<>(full.holders(full.shardOf(key, worker))));
        }
    }

    @Test
    void theShardKeyKeepsModelGroupAndInstanceApart() {
        assertTrue(!ShardPlacement.shardKey(new PartitionKey("a", "bc"), 1)
                .equals(ShardPlacement.shardKey(new PartitionKey("ab", "c"), 1)));
        assertTrue(!ShardPlacement.shardKey(new PartitionKey("a", "b"), 12)
                .equals(ShardPlacement.shardKey(new PartitionKey("a", "b1"), 2)));
    }
}
