package dev.kvindexer.cluster;

import static dev.kvindexer.cluster.HostileConnection.HUGE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.NetworkConfig;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
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
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A stranger on a node's event-bus port: a frame declaring two gigabytes followed by zeros, lengths of zero and below,
 * frames that together would hold more than the bus takes at once, a node with another token, and seeded random
 * traffic with and without a token. Each is closed and counted before it costs the node memory, the node stays up,
 * and the cluster's own messages (sharded queries) go on. Attacks on a pair of nodes share it: counts are differences.
 */
class BusGuardTest {
    private static final String TOKEN = "bus-secret";
    private static final long MIB = 1 << 20;

    private static final int FUZZ_CONNECTIONS = 300;

    private static final ClusterNodes plaintext = new ClusterNodes();
    private static final ClusterNodes sealed = new ClusterNodes();
    private static IndexerNode plainA;
    private static IndexerNode plainB;
    private static IndexerNode sealedA;
    private static IndexerNode sealedB;
    /** For attacks that need nodes of their own. */
    private final ClusterNodes cluster = new ClusterNodes();

    @BeforeAll
    static void startPairs() throws Exception {
        plainA = node(plaintext, null);
        plainB = node(plaintext, null);
        sealedA = node(sealed, TOKEN);
        sealedB = node(sealed, TOKEN);
    }

    @AfterAll
    static void stopPairs() {
        plaintext.close();
        sealed.close();
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** A sharded node (its queries cross the bus); with {@code token}, its bus speaks TLS. */
    private static IndexerNode node(ClusterNodes in, String token) throws Exception {
        return in.start(c -> c.withCluster(c.cluster().withReplicationFactor(1))
                .withSecurity(new SecurityConfig(token, false, null, null)));
    }

    static int busPort(IndexerNode node) {
        return ((VertxInternal) node.vertx()).clusterManager().getNodeInfo().port();
    }

    /** A sealed shard query from one node to another, answered: the bus between them works. */
    static boolean shardQueryAnswered(IndexerNode from, IndexerNode to, String token, Duration timeout) {
        // Asked again until the timeout: a request can be lost to a bus connection the fuzz just had closed, and the
        // question is whether the nodes talk, not whether one message got through.
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                return false;
            }
            if (answeredOnce(from, to, token, Duration.ofMillis(Math.min(left, ATTEMPT.toMillis())))) {
                return true;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(RETRY_PACE_NANOS); // paces retries that fail at once
        }
    }

    private static final Duration ATTEMPT = Duration.ofSeconds(5);
    private static final long RETRY_PACE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private static boolean answeredOnce(IndexerNode from, IndexerNode to, String token, Duration timeout) {
        ShardSeal seal = new ShardSeal(token);
        Buffer query = seal.request(
                ShardQueries.QUERY,
                ShardQueryCodec.encode(new ShardQueryCodec.Request(
                        new PartitionKey(ClusterFixture.MODEL, "default"),
                        ShardQueryCodec.LOCAL,
                        new long[0],
                        new long[] {7})));
        Future<Buffer> reply = from.vertx()
                .eventBus()
                .<Buffer>request(
                        ShardQueries.ADDRESS_PREFIX + to.membership().nodeId(),
                        query,
                        new DeliveryOptions().setSendTimeout(timeout.toMillis()))
                .map(m -> m.body());
        try {
            Buffer body = ClusterFixture.await(reply);
            return ShardQueryCodec.decodeReply(seal.openReply(ShardQueries.QUERY, query, body))
                            .served()
                            .length
                    == 0;
        } catch (Exception failed) {
            return false;
        }
    }

    /** Heap in use after full collections, the least of three (what is live, not what waits to be collected). */
    static long liveHeap() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(
                    least,
                    ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
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
        double refusedBefore = refused(target, reason);
        long before = liveHeap();
        long sent;
        long grown;
        boolean closed;
        try (HostileConnection c = HostileConnection.open(busPort(target))) {
            c.send(HostileConnection.busFrame(HUGE));
            sent = c.streamZeros(256 * MIB);
            closed = sent < 256 * MIB || c.closedWithin(Await.PATIENCE);
            grown = liveHeap() - before;
        }
        assertTrue(closed && sent < 32 * MIB, "the node closed the connection after " + sent / MIB + " MiB");
        assertTrue(grown < 8 * MIB, "the node's heap grew by " + grown / MIB + " MiB under the attack");
        assertEquals(1, refused(target, reason) - refusedBefore);
        assertEquals(200, new HttpJson(target.httpPort()).get("/health").statusCode());
        assertTrue(shardQueryAnswered(other, target, token, Await.PATIENCE), "the cluster's own messages still pass");
        assertTrue(shardQueryAnswered(target, other, token, Await.PATIENCE), "both ways");
    }

    @Test
    void aStrangerOnATokenBusIsClosedAtTheHandshake() throws Exception {
        assertTrue(shardQueryAnswered(sealedA, sealedB, TOKEN, Await.PATIENCE), "the nodes talk over TLS");
        attackAndSurvive(sealedB, sealedA, TOKEN, BusFrameGuard.TLS_HANDSHAKE);
    }

    @Test
    void aStrangerOnAPlaintextBusIsClosedAtTheFrameHeader() throws Exception {
        attackAndSurvive(plainB, plainA, null, BusFrameGuard.FRAME_SIZE);
    }

    @Test
    void framesOfZeroOrNegativeLengthAreRefused() throws Exception {
        double before = refused(plainB, BusFrameGuard.FRAME_SIZE);
        for (int declared : new int[] {0, -1, Integer.MIN_VALUE}) {
            try (HostileConnection c = HostileConnection.open(busPort(plainB))) {
                c.send(HostileConnection.busFrame(declared));
                assertTrue(c.closedWithin(Await.PATIENCE), "a frame of " + declared + " bytes closes the connection");
            }
        }
        assertEquals(3, refused(plainB, BusFrameGuard.FRAME_SIZE) - before);
        assertTrue(shardQueryAnswered(plainA, plainB, null, Await.PATIENCE));
    }

    /**
     * Vert.x allocates each length inside a frame before it checks it against the frame: an address, or a body, that
     * declares two gigabytes inside a frame of a hundred bytes closes the connection before Vert.x reads the frame.
     */
    @Test
    void aLengthInsideAFramePastItsEndIsRefused() throws Exception {
        double before = refused(plainB, BusFrameGuard.MESSAGE);
        byte[] address = ByteBuffer.allocate(4 + 100)
                .putInt(100)
                .put((byte) 1)
                .put((byte) 2) // String codec
                .put((byte) 0)
                .putInt(Integer.MAX_VALUE - 8) // the address
                .array();
        byte[] body = ByteBuffer.allocate(4 + 100)
                .putInt(100)
                .put((byte) 1)
                .put((byte) 6) // byte[] codec
                .put((byte) 0)
                .putInt(0)
                .putInt(0)
                .putInt(0)
                .putInt(4)
                .putInt(Integer.MAX_VALUE - 8) // the body
                .array();
        byte[] codec = ByteBuffer.allocate(4 + 100)
                .putInt(100)
                .put((byte) 1)
                .put((byte) 99)
                .array();
        for (byte[] frame : new byte[][] {address, body, codec}) {
            try (HostileConnection c = HostileConnection.open(busPort(plainB))) {
                c.send(frame);
                assertTrue(c.closedWithin(Await.PATIENCE), "the frame closes its connection");
            }
        }
        assertEquals(3, refused(plainB, BusFrameGuard.MESSAGE) - before);
        assertEquals(200, new HttpJson(plainB.httpPort()).get("/health").statusCode());
        assertTrue(shardQueryAnswered(plainA, plainB, null, Await.PATIENCE), "the cluster's own messages still pass");
    }

    @Test
    void aPlaintextBusTakesRandomTrafficAndGoesOn() throws Exception {
        fuzz(plainA, plainB, null);
    }

    @Test
    void aTokenBusTakesRandomTrafficAndGoesOn() throws Exception {
        fuzz(sealedA, sealedB, TOKEN);
    }

    /**
     * Random bytes, frames of small random lengths holding random bytes (what a plaintext bus parses as messages),
     * bus-shaped frames with their type and address bytes damaged, and connections cut mid-frame, at {@code b}.
     */
    private static void fuzz(IndexerNode a, IndexerNode b, String token) throws Exception {
        assertTrue(shardQueryAnswered(a, b, token, Await.PATIENCE), "the nodes talk before the fuzz");
        int port = busPort(b);
        SplittableRandom rnd = new SplittableRandom(0x627573L);
        for (int i = 0; i < FUZZ_CONNECTIONS; i++) {
            try (HostileConnection c = HostileConnection.open(port)) {
                int frames = 1 + rnd.nextInt(8);
                for (int f = 0; f < frames; f++) {
                    if (!c.send(fuzzFrame(rnd))) {
                        break;
                    }
                }
            }
        }
        assertEquals(200, new HttpJson(b.httpPort()).get("/health").statusCode());
        // The longer wait: on a starved machine the fuzz can stall a node long enough for its peer's bus to find no
        // pong and drop the connection, which the next request makes again.
        assertTrue(shardQueryAnswered(a, b, token, ClusterFixture.WAIT), "the cluster's own messages still pass");
        assertTrue(shardQueryAnswered(b, a, token, ClusterFixture.WAIT), "both ways");
    }

    /**
     * Frames within the limit, each sent in part and left there: together they may hold no more than the limit (64
     * MiB with a small --recovery-max-bytes), so the connection that would take the bus beyond it is closed.
     */
    /** A frame begun and fed a byte a second never completes: its connection is closed at the message timeout. */
    @Test
    void aFrameDripFedAByteAtATimeIsClosedAtItsDeadline() throws Exception {
        NetworkConfig quick = new NetworkConfig(NetworkConfig.defaults().maxBytes(), Duration.ofSeconds(2));
        IndexerNode a = cluster.start(
                c -> c.withCluster(c.cluster().withReplicationFactor(1)).withNetwork(quick));
        IndexerNode b = cluster.start(
                c -> c.withCluster(c.cluster().withReplicationFactor(1)).withNetwork(quick));
        try (HostileConnection c = HostileConnection.open(busPort(b))) {
            c.send(HostileConnection.busFrame(1000));
            boolean closed = false;
            for (int i = 0; i < 60 && !closed; i++) {
                closed = !c.send(new byte[1]) || c.closedWithin(Duration.ofSeconds(1));
            }
            assertTrue(closed, "a byte a second kept the frame alive");
        }
        assertEquals(1, refused(b, BusFrameGuard.STALLED));
        assertTrue(shardQueryAnswered(a, b, null, Await.PATIENCE), "the cluster's own messages still pass");
    }

    @Test
    void framesInProgressShareOneLimitAcrossConnections() throws Exception {
        RecoveryConfig small = new RecoveryConfig(1024, RecoveryConfig.DEFAULT.timeout());
        IndexerNode a = cluster.start(
                c -> c.withCluster(c.cluster().withReplicationFactor(1)).withRecovery(small));
        IndexerNode b = cluster.start(
                c -> c.withCluster(c.cluster().withReplicationFactor(1)).withRecovery(small));
        assertEquals(
                BusFrameGuard.FLOOR,
                BusFrameGuard.limit(1024, Runtime.getRuntime().maxMemory()));
        try (HostileConnection first = HostileConnection.open(busPort(b));
                HostileConnection second = HostileConnection.open(busPort(b))) {
            first.send(HostileConnection.busFrame(48 << 20));
            long firstSent = first.streamZeros(40 * MIB);
            second.send(HostileConnection.busFrame(48 << 20));
            long secondSent = second.streamZeros(40 * MIB);
            // Together they pass the limit. Which one the node refuses depends on the order it reads them in (each
            // still has megabytes in the kernel's buffers when the other starts): one is closed, the other goes on.
            boolean[] closed = new boolean[2];
            Await.until("one of the two frames refused", Await.PATIENCE, () -> {
                closed[0] |= firstSent < 40 * MIB || first.closedWithin(Duration.ofMillis(50));
                closed[1] |= secondSent < 40 * MIB || second.closedWithin(Duration.ofMillis(50));
                return closed[0] || closed[1];
            });
            HostileConnection kept = closed[0] ? second : first;
            assertFalse(closed[0] && closed[1], "only one frame was refused");
            assertFalse(kept.closedWithin(Duration.ofMillis(500)), "the other, within the limit, goes on");
            assertEquals(1, refused(b, BusFrameGuard.BUSY));
            assertTrue(shardQueryAnswered(a, b, null, Await.PATIENCE), "small frames still fit beside it");
        }
        // Closing them gives their bytes back: soon a frame of the same size fits again (each refusal is counted).
        int[] refusedMeanwhile = {0};
        Await.until("a frame as large passes again", Await.PATIENCE, () -> {
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
        IndexerNode a = node(cluster, TOKEN);
        IndexerNode b = node(cluster, TOKEN);
        IndexerNode stranger = node(cluster, "another-token");
        Await.until(
                "three members",
                Await.PATIENCE,
                () -> a.hazelcast().getCluster().getMembers().size() == 3);
        Duration shortWait = Duration.ofSeconds(3);
        assertFalse(shardQueryAnswered(stranger, a, "another-token", shortWait), "the stranger reaches no node");
        assertFalse(shardQueryAnswered(a, stranger, TOKEN, shortWait), "no node reaches the stranger");
        assertTrue(shardQueryAnswered(a, b, TOKEN, Await.PATIENCE), "the token's nodes still talk");
        Await.until(
                "the refused handshakes are counted",
                Await.PATIENCE,
                () -> refused(a, BusFrameGuard.TLS_HANDSHAKE) >= 1);
        for (IndexerNode n : new IndexerNode[] {a, b, stranger}) {
            assertEquals(200, new HttpJson(n.httpPort()).get("/health").statusCode());
        }
    }

    /** One piece of hostile traffic. */
    private static byte[] fuzzFrame(SplittableRandom rnd) {
        return switch (rnd.nextInt(4)) {
            case 0 -> { // random bytes
                byte[] b = new byte[1 + rnd.nextInt(512)];
                rnd.nextBytes(b);
                yield b;
            }
            case 1 -> { // a well-framed body of random bytes
                byte[] body = new byte[1 + rnd.nextInt(256)];
                rnd.nextBytes(body);
                yield ByteBuffer.allocate(4 + body.length)
                        .putInt(body.length)
                        .put(body)
                        .array();
            }
            case 2 -> { // a bus-shaped frame: protocol version, codec id, then damaged lengths and strings
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                ByteBuffer body = ByteBuffer.allocate(64);
                body.put((byte) 1).put((byte) (rnd.nextInt(20) - 3)).put((byte) rnd.nextInt(2));
                body.putInt(rnd.nextBoolean() ? rnd.nextInt() : rnd.nextInt(40));
                while (body.hasRemaining()) {
                    body.put((byte) rnd.nextInt(256));
                }
                out.writeBytes(ByteBuffer.allocate(4).putInt(body.capacity()).array());
                out.writeBytes(body.array());
                yield out.toByteArray();
            }
            // a frame cut short: the connection closes inside it
            default ->
                ByteBuffer.allocate(6)
                        .putInt(1 + rnd.nextInt(1 << 20))
                        .put((byte) 1)
                        .put((byte) 0)
                        .array();
        };
    }
}
