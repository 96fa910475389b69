package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.SecuritySettings;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Seeded random traffic at a node's event-bus port, with and without a token: random bytes, frames of small random
 * lengths holding random bytes (what a plaintext bus parses as messages), bus-shaped frames with their type and
 * address bytes damaged, and connections cut mid-frame. The node stays up and its own cluster messages keep passing.
 */
class BusFuzzTest {
    private static final int CONNECTIONS = 300;
    private static final Duration QUICKLY = Duration.ofSeconds(5);

    private final ClusterNodes cluster = new ClusterNodes();

    @AfterEach
    void stop() {
        cluster.close();
    }

    private IndexerNode node(String token) throws Exception {
        return cluster.start(c -> c.withCluster(c.cluster().withReplicationFactor(1))
                .withSecurity(new SecuritySettings(token, false, null, null)));
    }

    @Test
    void aPlaintextBusTakesRandomTrafficAndGoesOn() throws Exception {
        fuzz(null);
    }

    @Test
    void aTokenBusTakesRandomTrafficAndGoesOn() throws Exception {
        fuzz("fuzz-secret");
    }

    private void fuzz(String token) throws Exception {
        IndexerNode a = node(token);
        IndexerNode b = node(token);
        assertTrue(BusGuardTest.shardQueryAnswered(a, b, token, QUICKLY), "the nodes talk before the fuzz");
        int port = BusGuardTest.busPort(b);
        SplittableRandom rnd = new SplittableRandom(0x627573L);
        for (int i = 0; i < CONNECTIONS; i++) {
            try (HostileConnection c = HostileConnection.open(port)) {
                int frames = 1 + rnd.nextInt(8);
                for (int f = 0; f < frames; f++) {
                    if (!c.send(frame(rnd))) {
                        break;
                    }
                }
            }
        }
        assertEquals(200, new HttpJson(b.httpPort()).get("/health").statusCode());
        assertTrue(BusGuardTest.shardQueryAnswered(a, b, token, QUICKLY), "the cluster's own messages still pass");
        assertTrue(BusGuardTest.shardQueryAnswered(b, a, token, QUICKLY), "both ways");
    }

    /** One piece of hostile traffic. */
    private static byte[] frame(SplittableRandom rnd) {
        return switch (rnd.nextInt(4)) {
            case 0 -> { // random bytes
                byte[] b = new byte[1 + rnd.nextInt(512)];
                rnd.nextBytes(b);
                yield b;
            }
            case 1 -> { // a well-framed body of random bytes
                byte[] body = new byte[1 + rnd.nextInt(256)];
                rnd.nextBytes(body);
                yield ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
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
            default -> ByteBuffer.allocate(6).putInt(1 + rnd.nextInt(1 << 20)).put((byte) 1).put((byte) 0).array();
        };
    }
}
