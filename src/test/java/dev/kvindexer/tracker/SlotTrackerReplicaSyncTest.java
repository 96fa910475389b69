package dev.kvindexer.tracker;

import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SlotTrackerCommand;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.FreePort;
import dev.kvindexer.support.HttpJson;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Dynamo's replica sync between two real slot trackers over real ZMQ: each one's request lifecycle reaches the other's
 * loads, a peer's event for a worker this tracker does not know changes nothing, and the peer routes answer with
 * Dynamo's codes, 409 while replica sync is off.
 */
class SlotTrackerReplicaSyncTest {
    private static final String REGISTER = "{\"worker_id\":7,\"model_name\":\"m\",\"routing_group\":\"g\","
            + "\"block_size\":16,\"dp_start\":0,\"dp_size\":1}";
    private static final String ADD = "{\"model_name\":\"m\",\"routing_group\":\"g\",\"request_id\":\"r1\","
            + "\"worker_id\":7,\"dp_rank\":0,\"sequence_hashes\":[1,2,3],\"new_isl_tokens\":48}";
    private static final String REQ = "{\"model_name\":\"m\",\"routing_group\":\"g\",\"request_id\":\"r1\"}";

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private HttpJson tracker(int replicaPort, List<String> peers) throws Exception {
        SlotTrackerVerticle v = SlotTrackerCommand.deploy(
                vertx,
                new SlotTrackerConfig("127.0.0.1", 0, 300_000, 10_000, HttpConfig.DEFAULT, replicaPort, peers),
                () -> "");
        return new HttpJson(v.actualPort());
    }

    private static String load(HttpJson http) {
        return http.get("/loads?model_name=m").body();
    }

    @Test
    void aRequestsLifecycleReachesThePeerTracker() throws Exception {
        int portA = FreePort.any();
        int portB = FreePort.any();
        HttpJson a = tracker(portA, List.of());
        HttpJson b = tracker(portB, List.of("tcp://127.0.0.1:" + portA));
        // A learns of B through the route, as an operator adds a replica.
        assertEquals(
                201,
                a.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:" + portB + "\"}")
                        .statusCode());
        assertEquals(
                "[\"tcp://127.0.0.1:" + portA + "\"]",
                b.get("/replica_sync/peers").body());
        assertEquals(201, a.post("/register", REGISTER).statusCode());
        assertEquals(201, b.post("/register", REGISTER).statusCode());

        // Subscriptions connect in the background: add until the first one arrives, then follow its lifecycle.
        Await.until("B sees A's request", Await.PATIENCE, () -> {
            a.post("/free", REQ);
            a.post("/add", ADD);
            return load(b).contains("\"active_prefill_tokens\":48,\"active_decode_blocks\":3");
        });
        assertEquals(200, a.post("/prefill_complete", REQ).statusCode());
        Await.until(
                "B sees the prefill complete",
                Await.PATIENCE,
                () -> load(b).contains("\"active_prefill_tokens\":0,\"active_decode_blocks\":3"));
        assertEquals(200, a.post("/free", REQ).statusCode());
        Await.until(
                "B sees the request freed",
                Await.PATIENCE,
                () -> load(b).contains("\"active_prefill_tokens\":0,\"active_decode_blocks\":0"));

        // And back: B's request reaches A.
        Await.until("A sees B's request", Await.PATIENCE, () -> {
            b.post("/free", REQ.replace("r1", "r2"));
            b.post("/add", ADD.replace("r1", "r2"));
            return load(a).contains("\"active_prefill_tokens\":48,\"active_decode_blocks\":3");
        });

        // A peer's event for a worker this tracker does not have creates nothing.
        assertEquals(
                200,
                a.post("/unregister", "{\"worker_id\":7,\"model_name\":\"m\",\"routing_group\":\"g\"}")
                        .statusCode());
        assertEquals(201, b.post("/add", ADD.replace("r1", "r3")).statusCode());
        assertEquals(
                201, a.post("/register", REGISTER.replace("\"m\"", "\"other\"")).statusCode());
        String marker = ADD.replace("\"m\"", "\"other\"").replace("r1", "r4");
        assertEquals(
                201, b.post("/register", REGISTER.replace("\"m\"", "\"other\"")).statusCode());
        assertEquals(201, b.post("/add", marker).statusCode());
        Await.until(
                "A sees B's later request of another model",
                Await.PATIENCE,
                () -> a.get("/loads?model_name=other").body().contains("\"active_decode_blocks\":3"));
        assertEquals("[]", load(a), "the event for the unregistered worker made no tracker");
    }

    @Test
    void peerRoutesAnswerAsDynamosAndRefuseWhileSyncIsOff() throws Exception {
        HttpJson off = tracker(0, List.of());
        assertEquals("[]", off.get("/replica_sync/peers").body());
        assertError(
                409,
                "replica sync is disabled",
                off.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:1\"}"));
        assertError(
                409,
                "replica sync is disabled",
                off.post("/replica_sync/deregister_peer", "{\"endpoint\":\"tcp://127.0.0.1:1\"}"));
        assertError(405, "method not allowed", off.get("/replica_sync/register_peer"));

        HttpJson on = tracker(FreePort.any(), List.of());
        String peer = "{\"endpoint\":\"tcp://127.0.0.1:19093\"}";
        assertEquals(201, on.post("/replica_sync/register_peer", peer).statusCode());
        assertEquals(200, on.post("/replica_sync/register_peer", peer).statusCode());
        assertError(400, "invalid ZMQ endpoint", on.post("/replica_sync/register_peer", "{\"endpoint\":\"invalid\"}"));
        assertError(422, "missing field `endpoint`", on.post("/replica_sync/register_peer", "{}"));
        assertEquals(
                "[\"tcp://127.0.0.1:19093\"]", on.get("/replica_sync/peers").body());
        assertEquals(200, on.post("/replica_sync/deregister_peer", peer).statusCode());
        assertError(404, "peer not found", on.post("/replica_sync/deregister_peer", peer));
        assertTrue(on.get("/replica_sync/peers").body().equals("[]"));
    }
}
