package dev.kvindexer.cluster;

import static dev.kvindexer.cluster.HostileConnection.HUGE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.RecoveryLimits;
import dev.kvindexer.config.SecuritySettings;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.internal.VertxInternal;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A stranger on a node's event-bus port: a frame declaring two gigabytes followed by zeros, lengths of zero and below,
 * frames that together would hold more than the bus takes at once, a node with another token. Each is closed and
 * counted before it costs the node memory, and the cluster's own messages (sharded queries) go on.
 */
class BusGuardTest {
    private static final String TOKEN = "bus-secret";
    private static final long MIB = 1 << 20;
    private static final Duration QUICKLY = Duration.ofSeconds(5);

    private final ClusterNodes cluster = new ClusterNodes();

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** A sharded node (its queries cross the bus); with {@code token}, its bus speaks TLS. */
    private IndexerNode node(String token) throws Exception {
        return cluster.start(c -> c.withCluster(c.cluster().withReplicationFactor(1))
                .withSecurity(new SecuritySettings(token, false, null, null)));
    }

    static int busPort(IndexerNode node) {
        return ((VertxInternal) node.vertx()).clusterManager().getNodeInfo().port();
    }

    /** A sealed shard query from one node to another, answered: the bus between them works. */
    static boolean shardQueryAnswered(IndexerNode from, IndexerNode to, String token, Duration timeout) {
        ShardSeal seal = new ShardSeal(token);
        Buffer query = seal.request(ShardQueries.QUERY, ShardQueryCodec.encode(new ShardQueryCodec.Request(
                new PartitionKey(ClusterFixture.MODEL, "default"), ShardQueryCodec.LOCAL, new long[0], new long[] {7})));
        Future<Buffer> reply = from.vertx().eventBus().<Buffer>request(ShardQueries.ADDRESS_PREFIX + to.membership().nodeId(),
                query, new DeliveryOptions().setSendTimeout(timeout.toMillis())).map(m -> m.body());
        try {
            Buffer body = ClusterFixture.await(reply);
            return ShardQueryCodec.decodeReply(seal.openReply(ShardQueries.QUERY, query, body)).served().length == 0;
        } catch (Exception failed) {
            return false;
        }
    }

    /** Heap in use after full collections, the least of three (what is live, not what waits to be collected). */
    static long liveHeap() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(least, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return least;
    }

    private static double refused(IndexerNode node, String reason) {
        MetricsPage page = MetricsPage.of(new HttpJson(node.httpPort()));
        String series = "kvindexer_cluster_connections_refused_total{port=\"bus\",reason=\"" + reason + "\"}";
        return page.has(series) ? page.value(series) : 0;
    }

    /**
     * Streams the two-gigabyte frame at {@code target}'s bus and measures, while the connection is still open if the
     * node kept it, what the node's heap holds: an unguarded bus would hold all that was sent.
     */
    private static void attackAndSurvive(IndexerNode target, IndexerNode other, String token, String reason) {
        long before = liveHeap();
        long started = System.nanoTime();
        long sent;
        long grown;
        boolean closed;
        try (HostileConnection c = HostileConnection.open(busPort(target))) {
            c.send(HostileConnection.busFrame(HUGE));
            sent = c.streamZeros(256 * MIB);
            closed = sent < 256 * MIB || c.closedWithin(QUICKLY);
            grown = liveHeap() - before;
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        assertTrue(closed && sent < 32 * MIB, "the node closed the connection after " + sent / MIB + " MiB");
        assertTrue(millis < QUICKLY.toMillis(), "closed in " + millis + " ms");
        assertTrue(grown < 8 * MIB, "the node's heap grew by " + grown / MIB + " MiB under the attack");
        assertEquals(1, refused(target, reason));
        assertEquals(200, new HttpJson(target.httpPort()).get("/health").statusCode());
        assertTrue(shardQueryAnswered(other, target, token, QUICKLY), "the cluster's own messages still pass");
        assertTrue(shardQueryAnswered(target, other, token, QUICKLY), "both ways");
    }

    @Test
    void aStrangerOnATokenBusIsClosedAtTheHandshake() throws Exception {
        IndexerNode a = node(TOKEN);
        IndexerNode b = node(TOKEN);
        assertTrue(shardQueryAnswered(a, b, TOKEN, QUICKLY), "the nodes talk over TLS");
        attackAndSurvive(b, a, TOKEN, BusFrameGuard.TLS_HANDSHAKE);
    }

    @Test
    void aStrangerOnAPlaintextBusIsClosedAtTheFrameHeader() throws Exception {
        IndexerNode a = node(null);
        IndexerNode b = node(null);
        attackAndSurvive(b, a, null, BusFrameGuard.FRAME_SIZE);
    }

    @Test
    void framesOfZeroOrNegativeLengthAreRefused() throws Exception {
        IndexerNode a = node(null);
        IndexerNode b = node(null);
        for (int declared : new int[] {0, -1, Integer.MIN_VALUE}) {
            try (HostileConnection c = HostileConnection.open(busPort(b))) {
                c.send(HostileConnection.busFrame(declared));
                assertTrue(c.closedWithin(QUICKLY), "a frame of " + declared + " bytes closes the connection");
            }
        }
        assertEquals(3, refused(b, BusFrameGuard.FRAME_SIZE));
        assertTrue(shardQueryAnswered(a, b, null, QUICKLY));
    }

    /**
     * Frames within the limit, each sent in part and left there: together they may hold no more than the limit (64
     * MiB with a small --recovery-max-bytes), so the connection that would take the bus beyond it is closed.
     */
    @Test
    void framesInProgressShareOneLimitAcrossConnections() throws Exception {
        RecoveryLimits small = new RecoveryLimits(1024, RecoveryLimits.DEFAULT.timeout());
        IndexerNode a = cluster.start(c -> c.withCluster(c.cluster().withReplicationFactor(1)).withRecovery(small));
        IndexerNode b = cluster.start(c -> c.withCluster(c.cluster().withReplicationFactor(1)).withRecovery(small));
        assertEquals(BusFrameGuard.FLOOR, BusFrameGuard.limit(1024, Runtime.getRuntime().maxMemory()));
        try (HostileConnection first = HostileConnection.open(busPort(b));
             HostileConnection second = HostileConnection.open(busPort(b))) {
            first.send(HostileConnection.busFrame(48 << 20));
            assertEquals(40 * MIB, first.streamZeros(40 * MIB));
            second.send(HostileConnection.busFrame(48 << 20));
            long sent = second.streamZeros(40 * MIB);
            assertTrue(sent < 40 * MIB || second.closedWithin(QUICKLY), "the second frame was refused");
            assertFalse(first.closedWithin(Duration.ofMillis(500)), "the first, within the limit, goes on");
            assertEquals(1, refused(b, BusFrameGuard.BUSY));
            assertTrue(shardQueryAnswered(a, b, null, QUICKLY), "small frames still fit beside it");
        }
        // Closing them gives their bytes back: soon a frame of the same size fits again (each refusal is counted).
        int[] refusedMeanwhile = {0};
        Await.until("a frame as large passes again", QUICKLY, () -> {
            try (HostileConnection again = HostileConnection.open(busPort(b))) {
                again.send(HostileConnection.busFrame(48 << 20));
                if (again.streamZeros(40 * MIB) == 40 * MIB && !again.closedWithin(Duration.ofMillis(300))) {
                    return true;
                }
                refusedMeanwhile[0]++;
                return false;
            }
        });
        assertEquals(1 + refusedMeanwhile[0], refused(b, BusFrameGuard.BUSY));
    }

    @Test
    void aNodeWithAnotherTokenExchangesNoBusMessageAndNothingBreaks() throws Exception {
        IndexerNode a = node(TOKEN);
        IndexerNode b = node(TOKEN);
        IndexerNode stranger = node("another-token");
        Await.until("three members", QUICKLY, () -> a.hazelcast().getCluster().getMembers().size() == 3);
        Duration shortWait = Duration.ofSeconds(3);
        assertFalse(shardQueryAnswered(stranger, a, "another-token", shortWait), "the stranger reaches no node");
        assertFalse(shardQueryAnswered(a, stranger, TOKEN, shortWait), "no node reaches the stranger");
        assertTrue(shardQueryAnswered(a, b, TOKEN, QUICKLY), "the token's nodes still talk");
        Await.until("the refused handshakes are counted", QUICKLY, () -> refused(a, BusFrameGuard.TLS_HANDSHAKE) >= 1);
        for (IndexerNode n : new IndexerNode[] {a, b, stranger}) {
            assertEquals(200, new HttpJson(n.httpPort()).get("/health").statusCode());
        }
    }
}
