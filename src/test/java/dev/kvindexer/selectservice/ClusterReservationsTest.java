package dev.kvindexer.selectservice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reservations shared by every replica of a real Hazelcast cluster (issue: load every replica agrees on): a storm of
 * bookings, completions and releases against all replicas, and at every quiet point each replica's /loads equals
 * the others' and what the clients hold.
 */
class ClusterReservationsTest {
    private static final Map<String, String> ENV = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");
    private static final List<String> RANKS = List.of("1/0", "1/1", "2/0", "3/0");
    private final ClusterNodes cluster = new ClusterNodes();

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** The selection service on {@code node}, catching up with the cluster's map every 500 ms; its HTTP API. */
    static HttpJson serviceOn(IndexerNode node) throws Exception {
        SelectServiceConfig config = new SelectServiceConfig(
                "127.0.0.1", 0, 120_000, 4096, 268_435_456L, 500, 0, List.of(), HttpConfig.DEFAULT);
        SelectServiceVerticle service = SelectServiceCommand.deploy(node, config, SelectionConfig.fromEnvironment(ENV));
        return new HttpJson(service.actualPort());
    }

    private HttpJson replica() throws Exception {
        HttpJson http = serviceOn(cluster.start());
        // Each replica is given the whole catalog, as Dynamo's callers do.
        assertEquals(
                201,
                http.post(
                                "/workers",
                                "{\"worker_id\":1,\"model_name\":\"model\",\"endpoint\":\"http://w1\","
                                        + "\"block_size\":4,\"data_parallel_size\":2}")
                        .statusCode());
        for (int id = 2; id <= 3; id++) {
            assertEquals(
                    201,
                    http.post(
                                    "/workers",
                                    "{\"worker_id\":" + id + ",\"model_name\":\"model\"," + "\"endpoint\":\"http://w"
                                            + id + "\",\"block_size\":4}")
                            .statusCode());
        }
        return http;
    }

    private static void quietPoint(String what, LoadStorm storm, List<HttpJson> replicas) {
        Map<String, String> expected = storm.expected(RANKS);
        for (HttpJson r : replicas) {
            Await.equal(
                    what + ": a replica's loads are what the clients hold",
                    Await.PATIENCE,
                    expected,
                    () -> LoadStorm.reported(r));
        }
    }

    private void stormAndCheck(int replicaCount) throws Exception {
        List<HttpJson> replicas = new ArrayList<>();
        for (int i = 0; i < replicaCount; i++) {
            replicas.add(replica());
        }
        LoadStorm storm = new LoadStorm(() -> replicas);
        for (int round = 1; round <= 3; round++) {
            AtomicBoolean stop = new AtomicBoolean();
            int target = round;
            Thread timer = new Thread(() -> {
                try {
                    Thread.sleep(1500); // the storm's length; the quiet point is awaited, not slept for
                    storm.awaitWork(20 * target, 8 * target);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                stop.set(true);
            });
            timer.start();
            storm.run(8, stop);
            quietPoint("round " + round, storm, replicas);
        }
        assertTrue(
                storm.booked.get() > 50 && storm.freed.get() > 20,
                "the storm did work: " + storm.booked + " booked, " + storm.freed + " freed");
        // A booking's id is claimed cluster-wide: the same id on another replica is a conflict.
        assertEquals(
                200,
                replicas.get(0)
                        .post(
                                "/select_and_reserve",
                                "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"selection_id\":\"once\"}")
                        .statusCode());
        assertEquals(
                409,
                replicas.get(replicaCount - 1)
                        .post(
                                "/select_and_reserve",
                                "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"selection_id\":\"once\"}")
                        .statusCode());
        // Every replica sees an acknowledged booking at once, and can end it.
        assertEquals(
                200,
                replicas.get(replicaCount - 1)
                        .send("DELETE", "/reservations/once")
                        .statusCode());
        quietPoint("after the conflict", storm, replicas);
    }

    @Test
    void twoReplicasAgreeThroughAStorm() throws Exception {
        stormAndCheck(2);
    }

    @Test
    void threeReplicasAgreeThroughAStorm() throws Exception {
        stormAndCheck(3);
    }

    @Test
    void aJoiningReplicaTakesTheCurrentReservations() throws Exception {
        HttpJson a = replica();
        for (int i = 0; i < 10; i++) {
            assertEquals(
                    200,
                    a.post(
                                    "/select_and_reserve",
                                    "{\"model_name\":\"model\",\"token_ids\":[" + i + ",2,3,4,5],\"selection_id\":\"j"
                                            + i + "\"}")
                            .statusCode());
        }
        assertEquals(200, a.post("/reservations/j0/prefill_complete", "").statusCode());
        HttpJson b = replica();
        Await.equal(
                "the joiner's loads are the cluster's",
                Await.PATIENCE,
                LoadStorm.reported(a),
                () -> LoadStorm.reported(b));
        assertEquals(200, b.send("DELETE", "/reservations/j3").statusCode(), "a mirrored reservation ends anywhere");
        Await.equal(
                "and its end reaches the others", Await.PATIENCE, LoadStorm.reported(b), () -> LoadStorm.reported(a));
    }

    /**
     * The same ids booked on two replicas at the same moment, each replica holding its own booking of the id while
     * the claims are decided: exactly one of each pair is acknowledged, the refused one leaves no trace, and both
     * replicas then count exactly the acknowledged ones; each acknowledged booking is counted on the other replica as
     * soon as it is answered.
     */
    @Test
    void theSameIdBookedOnTwoReplicasAtOnceIsCountedOnceEverywhere() throws Exception {
        HttpJson a = replica();
        HttpJson b = replica();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            int won = 0;
            for (int i = 0; i < 40; i++) {
                String body = "{\"model_name\":\"model\",\"token_ids\":[" + i + ",2,3,4,5],\"selection_id\":\"race" + i
                        + "\"}";
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.Future<Integer> onA = pool.submit(() -> {
                    go.await();
                    return a.post("/select_and_reserve", body).statusCode();
                });
                java.util.concurrent.Future<Integer> onB = pool.submit(() -> {
                    go.await();
                    return b.post("/select_and_reserve", body).statusCode();
                });
                go.countDown();
                List<Integer> statuses = List.of(onA.get(), onB.get());
                assertEquals(1, statuses.stream().filter(c -> c == 200).count(), "one winner: " + statuses);
                assertTrue(statuses.contains(409), "one refused: " + statuses);
                won++;
                HttpJson winner = statuses.get(0) == 200 ? a : b;
                HttpJson other = winner == a ? b : a;
                assertEquals(
                        won,
                        activeRequests(other),
                        "race" + i + ": the other replica counts every acknowledged booking at once");
            }
            int booked = won;
            Await.equal("both replicas count the winners", Await.PATIENCE, booked, () -> activeRequests(a));
            Await.equal("and only them", Await.PATIENCE, LoadStorm.reported(a), () -> LoadStorm.reported(b));
        } finally {
            pool.shutdownNow();
        }
    }

    private static int activeRequests(HttpJson replica) {
        int n = 0;
        for (String load : LoadStorm.reported(replica).values()) {
            n += Integer.parseInt(load.substring(0, load.indexOf('/')));
        }
        return n;
    }
}
