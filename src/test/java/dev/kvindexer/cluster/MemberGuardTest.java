package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Hazelcast member port of a real node against packets no member sends: a header declaring two gigabytes, one
 * over the pre-handshake limit, a connection that never completes its handshake. Hazelcast alone allocates what the
 * header declares, so the first would end the JVM; each is closed and counted, and the cluster goes on. Members' own
 * large packets still pass. This fails first when a Hazelcast upgrade stops using {@link MemberGuard}'s decoder.
 */
class MemberGuardTest {
    /** Two members all tests share: each attack is a connection of its own, and counts are read as differences. */
    private static final ClusterNodes cluster = new ClusterNodes();

    private static IndexerNode a;
    private static IndexerNode b;

    @BeforeAll
    static void start() throws Exception {
        a = cluster.start();
        b = cluster.start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    static int memberPort(HazelcastInstance member) {
        return member.getCluster().getLocalMember().getAddress().getPort();
    }

    private static double refused(IndexerNode node, String reason) {
        MetricsPage page = MetricsPage.of(new HttpJson(node.httpPort()));
        String series = "kvindexer_cluster_connections_refused_total{port=\"member\",reason=\"" + reason + "\"}";
        return page.has(series) ? page.value(series) : 0;
    }

    /**
     * Sends each of {@code attacks} on a connection of its own to the second node, which must close each (at once, or
     * only once the handshake deadline has passed); then both must still be healthy members of one cluster.
     */
    private void assertEachClosed(boolean atTheDeadline, String reason, byte[]... attacks) throws Exception {
        double before = refused(b, reason);
        for (byte[] attack : attacks) {
            try (HostileConnection c = HostileConnection.open(memberPort(b.hazelcast()))) {
                c.send(attack);
                if (atTheDeadline) {
                    assertFalse(c.closedWithin(Duration.ofSeconds(2)), "a slow member gets its time");
                }
                assertTrue(c.closedWithin(Duration.ofSeconds(atTheDeadline ? MemberGuard.HANDSHAKE_SECONDS : 0)
                        .plus(Await.PATIENCE)));
            }
        }
        assertEquals(attacks.length, refused(b, reason) - before);
        for (IndexerNode n : new IndexerNode[] {a, b}) {
            assertTrue(n.hazelcast().getLifecycleService().isRunning());
            assertEquals(2, n.hazelcast().getCluster().getMembers().size());
            assertEquals(200, new HttpJson(n.httpPort()).get("/health").statusCode());
        }
        String key = "k" + reason + attacks.length;
        a.hazelcast().getMap("guard.test").put(key, "v");
        assertEquals("v", b.hazelcast().getMap("guard.test").get(key));
    }

    @Test
    void aHeaderDeclaringTwoGigabytesIsRefusedBeforeAnythingIsAllocated() throws Exception {
        assertEachClosed(false, MemberGuard.PACKET_SIZE, HostileConnection.memberPacket(HostileConnection.HUGE));
    }

    @Test
    void beforeItsHandshakeAConnectionMayDeclareLittle() throws Exception {
        assertEachClosed(
                false,
                MemberGuard.PACKET_SIZE,
                HostileConnection.memberPacket(MemberGuard.BEFORE_HANDSHAKE + 1),
                HostileConnection.memberPacket(-1));
    }

    /** One that begins the member protocol, and one that sends nothing at all. */
    @Test
    void aConnectionThatNeverHandsShakesIsClosedAfterTheDeadline() throws Exception {
        assertEachClosed(true, MemberGuard.NO_HANDSHAKE, new byte[] {'H', 'Z', 'C', 4, 0}, new byte[0]);
    }

    @Test
    void membersStillExchangeLargeValues() throws Exception {
        double before = refused(a, MemberGuard.PACKET_SIZE) + refused(b, MemberGuard.PACKET_SIZE);
        String key = ownedBy(b.hazelcast());
        byte[] large = new byte[20 << 20];
        new Random(7).nextBytes(large);
        a.hazelcast().<String, byte[]>getMap("guard.large").put(key, large);
        assertArrayEquals(
                large,
                a.hazelcast().<String, byte[]>getMap("guard.large").get(key),
                "20 MiB to the owner and back, in packets that grow as they arrive");
        assertEquals(before, refused(a, MemberGuard.PACKET_SIZE) + refused(b, MemberGuard.PACKET_SIZE));
    }

    /** A key whose partition {@code member} owns, so that a value put from elsewhere crosses the wire. */
    private static String ownedBy(HazelcastInstance member) {
        for (int i = 0; ; i++) {
            String key = "k" + i;
            if (member.getPartitionService().getPartition(key).getOwner().localMember()) {
                return key;
            }
        }
    }

    @Test
    void limitsFitTheHeapAndTheMigrationChunks() {
        assertEquals(MemberGuard.FLOOR, MemberGuard.limit(128L << 20));
        assertEquals(1 << 30, MemberGuard.limit(4L << 30));
        assertEquals(Integer.MAX_VALUE - 8, MemberGuard.limit(64L << 30));
        Config unset = HazelcastConfigs.load(ClusterConfig.loopback("x"));
        MemberGuard guard = MemberGuard.guard(unset, new ClusterCounters());
        long chunkBytes = Long.parseLong(unset.getProperty(MemberGuard.CHUNK_PROPERTY)) << 20;
        assertTrue(chunkBytes + MemberGuard.CHUNK_MARGIN <= guard.limit(), "a migration chunk fits in one packet");
        Config large = HazelcastConfigs.load(ClusterConfig.loopback("x"));
        large.setProperty(MemberGuard.CHUNK_PROPERTY, "900");
        assertEquals(
                (900L << 20) + MemberGuard.CHUNK_MARGIN,
                MemberGuard.guard(large, new ClusterCounters()).limit(),
                "chunks set larger raise the limit to fit");
    }
}
