package dev.kvindexer.selectservice;

import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.load.LoadEvent;
import dev.kvindexer.selectservice.replication.ReplicaEventCodec;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Dynamo's replica sync between two real services over real ZMQ (docs/api/selection.md#replica-sync, checks C16 and C17). */
class ReplicaSyncHttpTest {
    private static final Map<String, String> EVENTS_OFF = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");
    private static final String WORKER_1 =
            "{\"worker_id\":1,\"model_name\":\"model\",\"endpoint\":\"http://worker-1:8000\"," + "\"block_size\":4}";
    private static final Duration WAIT = Await.PATIENCE;

    private SelectServiceFixture a;
    private SelectServiceFixture b;

    @AfterEach
    void stop() {
        for (SelectServiceFixture f : new SelectServiceFixture[] {a, b}) {
            if (f != null) {
                f.close();
            }
        }
    }

    private static SelectServiceFixture withSync(int port) throws Exception {
        return SelectServiceFixture.start(
                EVENTS_OFF,
                new SelectServiceConfig(
                        "127.0.0.1", 0, 120_000, 4096, 268_435_456L, 10_000, port, List.of(), HttpConfig.DEFAULT));
    }

    /** requests/decode blocks/prefill tokens of worker 1 rank 0. */
    private static String loads(HttpJson http) {
        return LoadStorm.reported(http).get("1/0");
    }

    @Test
    void c16PeersAreRegisteredOnceAndValidated() throws Exception {
        a = withSync(FreePort.any());
        HttpJson http = a.http;
        String peer = "{\"endpoint\":\"tcp://127.0.0.1:19092\"}";
        assertEquals(201, http.post("/replica_sync/register_peer", peer).statusCode());
        assertEquals(200, http.post("/replica_sync/register_peer", peer).statusCode());
        assertError(400, "invalid", http.post("/replica_sync/register_peer", "{\"endpoint\":\"invalid\"}"));
        assertEquals(
                "[\"tcp://127.0.0.1:19092\"]", http.get("/replica_sync/peers").body());
        assertEquals(200, http.post("/replica_sync/deregister_peer", peer).statusCode());
        assertError(404, "peer not found", http.post("/replica_sync/deregister_peer", peer));
        assertEquals("[]", http.get("/replica_sync/peers").body());
    }

    /** A hostile peer: every malformed message is dropped, and a valid one after them is still applied. */
    @Test
    void malformedPeerMessagesAreDroppedAndTheReceiverKeepsGoing() throws Exception {
        b = withSync(FreePort.any());
        assertEquals(201, b.http.post("/workers", WORKER_1).statusCode());
        try (ZContext zmq = new ZContext(1)) {
            ZMQ.Socket hostile = zmq.createSocket(SocketType.PUB);
            hostile.setLinger(0);
            int port = FreePort.any();
            hostile.bind("tcp://*:" + port);
            String endpoint = "tcp://127.0.0.1:" + port;
            assertEquals(
                    201,
                    b.http.post("/replica_sync/register_peer", "{\"endpoint\":\"" + endpoint + "\"}")
                            .statusCode());
            byte[] topic = ReplicaEventCodec.TOPIC.getBytes(StandardCharsets.UTF_8);
            byte[] valid = ReplicaEventCodec.encode(
                    new LoadEvent.Added(
                            new PartitionKey("model", "default"), 4, "ok", 1, 0, null, new long[] {5}, true, null, 4),
                    99);
            // Until the subscription is up the publisher drops everything, so the whole series is sent again until
            // the valid event at its end arrives; each time the hostile messages reach the receiver first. The wait
            // covers the subscriber's reconnect backoff (up to 5 s a try) should its first connect attempt fail.
            try {
                Await.until("the valid event after the hostile ones is applied", Duration.ofSeconds(30), () -> {
                    send(hostile, topic); // one frame
                    send(hostile, topic, valid, valid); // three frames
                    send(hostile, topic, HexFormat.of().parseHex("dd7fffffff")); // an array of 2^31 entries
                    send(hostile, topic, HexFormat.of().parseHex("81db7fffffff")); // a 2 GiB string
                    send(hostile, topic, new byte[] {(byte) 0xc1}); // no msgpack at all
                    send(hostile, topic, Arrays.copyOf(valid, valid.length / 2)); // cut short
                    send(hostile, topic, valid);
                    return "1/1/4".equals(loads(b.http));
                });
            } catch (AssertionError e) {
                throw new AssertionError(
                        e.getMessage() + "; received, malformed: " + Arrays.toString(b.service.replicaCounts()), e);
            }
            long[] counts = b.service.replicaCounts();
            assertTrue(counts[1] >= 5 && counts[0] > counts[1], "received, malformed: " + Arrays.toString(counts));
        }
    }

    private static void send(ZMQ.Socket socket, byte[]... frames) {
        for (int i = 0; i < frames.length; i++) {
            socket.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    @Test
    void c17APeerFollowsTheLifecycle() throws Exception {
        int portA = FreePort.any();
        a = withSync(portA);
        b = withSync(FreePort.any());
        for (SelectServiceFixture f : new SelectServiceFixture[] {a, b}) {
            assertEquals(201, f.http.post("/workers", WORKER_1).statusCode());
        }
        assertEquals(
                201,
                b.http.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:" + portA + "\"}")
                        .statusCode());
        // A SUB socket misses what is published before its connection is up: probe until B sees A's bookings.
        int[] probe = {0};
        Await.until("B hears A", WAIT, () -> {
            String id = "probe-" + probe[0]++;
            a.http.post(
                    "/select_and_reserve",
                    "{\"model_name\":\"model\",\"token_ids\":[9,9,9,9],\"selection_id\":\"" + id + "\"}");
            boolean heard = false;
            for (int i = 0; i < 20 && !heard; i++) {
                heard = loads(b.http).startsWith("1/");
                if (!heard) {
                    Thread.onSpinWait();
                }
            }
            a.http.send("DELETE", "/reservations/" + id);
            return heard;
        });
        Await.equal("B drops the probes", WAIT, "0/0/0", () -> loads(b.http));

        assertEquals(
                200,
                a.http.post(
                                "/select_and_reserve",
                                "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"selection_id\":\"r1\"}")
                        .statusCode());
        Await.equal("step 1 on B", WAIT, "1/1/4", () -> loads(b.http));
        assertEquals(200, a.http.post("/reservations/r1/prefill_complete", "").statusCode());
        Await.equal("step 3 on B", WAIT, "1/1/0", () -> loads(b.http));
        assertEquals(200, a.http.send("DELETE", "/reservations/r1").statusCode());
        Await.equal("step 6 on B", WAIT, "0/0/0", () -> loads(b.http));
        assertEquals("0/0/0", loads(a.http));

        // A mirrored reservation can be ended on the replica that mirrors it, and that is published in turn.
        assertEquals(
                200,
                b.http.post(
                                "/select_and_reserve",
                                "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"selection_id\":\"r2\"}")
                        .statusCode());
        assertEquals("1/1/4", loads(b.http));
        assertEquals("0/0/0", loads(a.http), "A does not subscribe to B");
    }
}
