package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SessionRequests.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.AffinityTarget;
import dev.kvindexer.select.SessionBindings;
import dev.kvindexer.selectservice.replication.AffinityEventCodec;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Session bindings over Dynamo's replica mesh (docs/api/selection.md#session-affinity): two real services whose ZMQ
 * replica sync is connected both ways route a session bound on either to the same worker, and a hostile peer's
 * bindings are counted and dropped while the receiver keeps going. Worker 1 carries a heavy booking, so a selection
 * that lands there was steered by a binding.
 */
class SessionAffinityMeshTest {
    private static final Duration WAIT = Await.PATIENCE;

    @RegisterExtension
    final SelectServicePerTest services = new SelectServicePerTest();

    private SelectServiceFixture a;
    private SelectServiceFixture b;

    private SelectServiceFixture withSync(int port) throws Exception {
        SelectServiceFixture f = services.start(
                Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"),
                new SelectServiceConfig(
                                "127.0.0.1",
                                0,
                                120_000,
                                4096,
                                268_435_456L,
                                10_000,
                                port,
                                List.of(),
                                HttpConfig.DEFAULT)
                        .withSessionAffinityTtlSecs(3600));
        for (int w = 1; w <= 2; w++) {
            SelectServiceFixture.registerWorker(f.http, w);
        }
        return f;
    }

    /** Books session {@code session} on {@code http}'s replica, restricted to {@code worker}, so it is bound there. */
    private static void bind(HttpJson http, String session, long worker) {
        assertEquals(
                worker,
                worker(
                        http,
                        "/select_and_reserve",
                        "\"session_id\":\"" + session + "\",\"allowed_worker_ids\":[" + worker + "]"));
    }

    /** A heavy booking on worker 1 under {@code id}, so an unsteered selection goes to worker 2. */
    private static void loadWorker1(HttpJson http, String id) {
        SessionRequests.load(http, 1, id, 64);
    }

    private static void peer(SelectServiceFixture f, int port) {
        assertEquals(
                201,
                f.http.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:" + port + "\"}")
                        .statusCode());
    }

    @Test
    void aSessionBoundOnEitherReplicaIsRoutedToTheSameWorkerByBoth() throws Exception {
        int portA = FreePort.any();
        int portB = FreePort.any();
        a = withSync(portA);
        b = withSync(portB);
        peer(a, portB);
        peer(b, portA);
        loadWorker1(a.http, "heavy-a");
        loadWorker1(b.http, "heavy-b");
        assertEquals(2, worker(b.http, "/select", "\"session_id\":\"unbound\""), "unsteered: away from worker 1");

        // A SUB socket misses what is published before its connection is up: bind new sessions until B hears one.
        int[] probe = {0};
        Await.until("B routes a session A bound to where A bound it", WAIT, () -> {
            String session = "a-" + probe[0]++;
            bind(a.http, session, 1);
            return worker(b.http, "/select", "\"session_id\":\"" + session + "\"") == 1;
        });
        Await.until("A routes a session B bound to where B bound it", WAIT, () -> {
            String session = "b-" + probe[0]++;
            bind(b.http, session, 1);
            return worker(a.http, "/select", "\"session_id\":\"" + session + "\"") == 1;
        });

        bind(a.http, "s", 1);
        Await.until("B follows s", WAIT, () -> worker(b.http, "/select", "\"session_id\":\"s\"") == 1);
        assertEquals(1, worker(b.http, "/select_and_reserve", "\"session_id\":\"s\""), "and books it there");
        assertEquals(1, worker(a.http, "/select_and_reserve", "\"session_id\":\"s\""));
        assertTrue(b.service.sessionCounts()[0] >= 1);
        assertEquals(0, b.service.replicaCounts()[1], "nothing malformed between two replicas");
    }

    /** A hostile peer: malformed bindings and ones over the limits are dropped; a valid one after them applies. */
    @Test
    void aHostilePeersBindingsAreCountedAndDropped() throws Exception {
        b = withSync(FreePort.any());
        loadWorker1(b.http, "heavy");
        try (ZContext zmq = new ZContext(1)) {
            ZMQ.Socket hostile = zmq.createSocket(SocketType.PUB);
            hostile.setLinger(0);
            int port = FreePort.any();
            hostile.bind("tcp://*:" + port);
            peer(b, port);
            byte[] topic = AffinityEventCodec.TOPIC.getBytes(StandardCharsets.UTF_8);
            PartitionKey p = new PartitionKey("model", "default");
            byte[] valid = AffinityEventCodec.encode(
                    new SessionBindings.Binding(p, "h", new AffinityTarget(1, 0), new SessionBindings.Version(7, 99)));
            byte[] tooLong = AffinityEventCodec.encode(new SessionBindings.Binding(
                    p, "x".repeat(257), new AffinityTarget(1, 0), new SessionBindings.Version(7, 99)));
            Await.until(
                    "the valid binding after the hostile ones is applied, a whole round counted",
                    Duration.ofSeconds(30),
                    () -> {
                        send(hostile, topic, valid, valid); // three frames
                        send(hostile, topic, HexFormat.of().parseHex("87dd7fffffff")); // an array of 2^31 entries
                        send(hostile, topic, HexFormat.of().parseHex("81db7fffffff")); // a 2 GiB string
                        send(hostile, topic, new byte[] {(byte) 0xc1}); // no msgpack at all
                        send(hostile, topic, Arrays.copyOf(valid, valid.length / 2)); // cut short
                        send(hostile, topic, HexFormat.of().parseHex("81a1789100")); // no member of a binding
                        send(hostile, topic, tooLong);
                        send(hostile, topic, valid);
                        // A round sent before the subscription took hold is lost in part, so rounds go on until one
                        // whole
                        // round has been counted.
                        long[] seen = b.service.replicaCounts();
                        return worker(b.http, "/select", "\"session_id\":\"h\"") == 1 && seen[1] >= 6 && seen[3] >= 1;
                    });
            long[] counts = b.service.replicaCounts();
            assertTrue(
                    counts[1] >= 6 && counts[3] >= 1,
                    "received, malformed, overflow, refused: " + Arrays.toString(counts));
            assertEquals(1, b.service.sessionCounts()[0], "only the valid binding is held");
        }
    }

    private static void send(ZMQ.Socket socket, byte[]... frames) {
        for (int i = 0; i < frames.length; i++) {
            socket.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }
}
