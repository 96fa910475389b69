package dev.kvindexer.selectservice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.map.IMap;
import dev.kvindexer.cluster.SealedBytes;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.Reservation;
import dev.kvindexer.selectservice.replication.ClusterLoad;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reservations shared by replicas whose cluster has an auth token: records written straight into the cluster's map
 * and pushes sent straight onto the event bus, unsealed or sealed with something else, are ignored and counted; the
 * replicas' loads stay what their clients hold, and a forged record is never advanced into a sealed one.
 */
class SealedReservationsTest {
    private static final String TOKEN = "select-secret";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ClusterNodes cluster = new ClusterNodes();

    @AfterEach
    void stop() {
        cluster.close();
    }

    private record Replica(IndexerNode node, HttpJson http) {}

    private Replica replica() throws Exception {
        IndexerNode node = cluster.start(c -> c.withSecurity(new SecurityConfig(TOKEN, false, null, null)));
        HttpJson http = ClusterReservationsTest.serviceOn(node);
        assertEquals(
                201,
                http.post(
                                "/workers",
                                "{\"worker_id\":1,\"model_name\":\"model\",\"endpoint\":\"http://w1\","
                                        + "\"block_size\":4}")
                        .statusCode());
        return new Replica(node, http);
    }

    private static double rejected(List<Replica> replicas, String source, String reason) {
        double n = 0;
        for (Replica r : replicas) {
            MetricsPage page = MetricsPage.of(new HttpJson(r.node().httpPort()));
            String series =
                    "kvindexer_cluster_values_rejected_total{source=\"" + source + "\",reason=\"" + reason + "\"}";
            n += page.has(series) ? page.value(series) : 0;
        }
        return n;
    }

    /** A record like {@code real} under another id, with a load no client holds. */
    private static Reservation forged(Reservation real, String id) {
        return new Reservation(
                id,
                real.partition(),
                real.blockSize(),
                real.workerId(),
                real.dpRank(),
                null,
                real.sequenceHashes(),
                40_000,
                true,
                500L,
                false,
                0,
                real.decay(),
                System.currentTimeMillis(),
                1,
                1);
    }

    /** The mark and a seal of zeros: the shape of a sealed record, without the token. */
    private static byte[] wronglySealed(byte[] bytes) {
        byte[] out = new byte[33 + bytes.length];
        out[0] = (byte) 0xA5;
        System.arraycopy(bytes, 0, out, 33, bytes.length);
        return out;
    }

    private static Throwable failureOf(Future<?> request) throws Exception {
        return request.transform(ar -> Future.succeededFuture(ar.cause()))
                .toCompletionStage()
                .toCompletableFuture()
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void forgedRecordsAndPushesAreIgnoredAndCounted() throws Exception {
        Replica a = replica();
        Replica b = replica();
        List<Replica> both = List.of(a, b);
        assertEquals(
                200,
                a.http()
                        .post(
                                "/select_and_reserve",
                                "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4,5,6,7,8],\"selection_id\":\"real\"}")
                        .statusCode());
        Map<String, String> held = LoadStorm.reported(a.http());
        Await.equal("the real booking reaches the other replica", WAIT, held, () -> LoadStorm.reported(b.http()));

        IMap<String, byte[]> map = a.node().hazelcast().getMap(ClusterLoad.MAP);
        Reservation real =
                Reservation.decode(SealedBytes.of(a.node().hazelcast()).peek(map.get("real")));
        map.put("unsealed", forged(real, "unsealed").encode());
        map.put("badly-sealed", wronglySealed(forged(real, "badly-sealed").encode()));
        Await.until(
                "the replicas' passes drop the forged records",
                WAIT,
                () -> !map.containsKey("unsealed") && !map.containsKey("badly-sealed"));
        assertTrue(rejected(both, ClusterLoad.RECORDS, "unsigned") >= 1);
        assertTrue(rejected(both, ClusterLoad.RECORDS, "bad_signature") >= 1);

        String bNode = b.node().membership().nodeId();
        for (byte[] push : new byte[][] {
            Buffer.buffer()
                    .appendByte((byte) 1)
                    .appendBytes(forged(real, "pushed").encode())
                    .getBytes(),
            wronglySealed(Buffer.buffer()
                    .appendByte((byte) 1)
                    .appendBytes(forged(real, "pushed").encode())
                    .getBytes())
        }) {
            Throwable refused =
                    failureOf(a.node().vertx().eventBus().request(ClusterLoad.ADDRESS + bNode, Buffer.buffer(push)));
            assertTrue(refused instanceof ReplyException r && r.failureCode() == 401, String.valueOf(refused));
        }
        assertEquals(1, rejected(List.of(b), ClusterLoad.PUSHES, "unsigned"));
        assertEquals(1, rejected(List.of(b), ClusterLoad.PUSHES, "bad_signature"));

        byte[] forgery = wronglySealed(forged(real, "advance-me").encode());
        map.put("advance-me", forgery);
        assertEquals(
                404,
                b.http().post("/reservations/advance-me/prefill_complete", "").statusCode(),
                "a forged record is no reservation");
        byte[] after = map.get("advance-me");
        assertTrue(after == null || Arrays.equals(forgery, after), "and it was not sealed on the way");

        assertEquals(held, LoadStorm.reported(a.http()), "loads are what the clients hold");
        assertEquals(held, LoadStorm.reported(b.http()));
        assertEquals(200, b.http().send("DELETE", "/reservations/real").statusCode());
        Await.equal(
                "the real booking's end reaches both",
                WAIT,
                LoadStorm.reported(b.http()),
                () -> LoadStorm.reported(a.http()));
    }
}
