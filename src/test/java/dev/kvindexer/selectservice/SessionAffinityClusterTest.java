package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SessionRequests.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.map.IMap;
import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.AffinityTarget;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SessionBindings;
import dev.kvindexer.selectservice.replication.AffinityEventCodec;
import dev.kvindexer.selectservice.replication.ClusterBindings;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Session bindings shared by every replica of a real Hazelcast cluster on 127.0.0.1, as reservations are
 * (docs/api/selection.md#session-affinity): a booking's binding is on every replica before its client hears of it, a
 * replica that joins later catches up from the cluster's map, and all of them route the session to one worker. Under
 * the cluster's token, forged bindings are ignored and counted. Worker 1 carries a heavy booking (itself shared), so a
 * selection that lands there was steered by a binding.
 */
class SessionAffinityClusterTest {
    private static final Map<String, String> ENV = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");
    private static final String TOKEN = "select-secret";
    private final ClusterNodes cluster = new ClusterNodes();

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** A replica with session affinity, catching up with the cluster's maps every 500 ms, given the whole catalog. */
    private HttpJson replica() throws Exception {
        return replica(cluster.start());
    }

    private static HttpJson replica(IndexerNode node) throws Exception {
        SelectServiceConfig config = new SelectServiceConfig(
                        "127.0.0.1", 0, 120_000, 4096, 268_435_456L, 500, 0, List.of(), HttpConfig.DEFAULT)
                .withSessionAffinityTtlSecs(3600);
        HttpJson http = new HttpJson(SelectServiceCommand.deploy(node, config, SelectionConfig.fromEnvironment(ENV))
                .actualPort());
        for (int w = 1; w <= 2; w++) {
            SelectServiceFixture.registerWorker(http, w);
        }
        return http;
    }

    @Test
    void everyReplicaRoutesASessionToTheWorkerItWasBoundTo() throws Exception {
        HttpJson a = replica();
        HttpJson b = replica();
        SessionRequests.load(a, 1, "heavy", 64);
        assertEquals(2, worker(b, "/select", "\"session_id\":\"unbound\""), "unsteered: away from worker 1");

        assertEquals(1, worker(a, "/select_and_reserve", "\"session_id\":\"s\",\"allowed_worker_ids\":[1]"));
        assertEquals(1, worker(b, "/select", "\"session_id\":\"s\""), "B held the binding before A answered");
        assertEquals(1, worker(b, "/select_and_reserve", "\"session_id\":\"s\""));
        assertEquals(1, worker(b, "/select_and_reserve", "\"session_id\":\"t\",\"allowed_worker_ids\":[1]"));
        assertEquals(1, worker(a, "/select", "\"session_id\":\"t\""), "and the other way round");

        HttpJson c = replica();
        // Until its load is the others', an idle worker 1 could win a tie by chance: the load first, then the bindings.
        Await.equal(
                "a replica that joined later catches up with the reservations",
                Await.PATIENCE,
                LoadStorm.reported(a),
                () -> LoadStorm.reported(c));
        assertEquals(2, worker(c, "/select", "\"session_id\":\"unbound\""));
        Await.until(
                "and with the bindings",
                Await.PATIENCE,
                () -> worker(c, "/select", "\"session_id\":\"s\"") == 1
                        && worker(c, "/select", "\"session_id\":\"t\"") == 1);
        assertEquals(1, worker(c, "/select_and_reserve", "\"session_id\":\"s\""));
    }

    @Test
    void forgedBindingsAreIgnoredAndCounted() throws Exception {
        List<IndexerNode> nodes = List.of(
                cluster.start(c -> c.withSecurity(new SecurityConfig(TOKEN, false, null, null))),
                cluster.start(c -> c.withSecurity(new SecurityConfig(TOKEN, false, null, null))));
        HttpJson a = replica(nodes.get(0));
        HttpJson b = replica(nodes.get(1));
        SessionRequests.load(a, 1, "heavy", 64);
        assertEquals(1, worker(a, "/select_and_reserve", "\"session_id\":\"s\",\"allowed_worker_ids\":[1]"));
        assertEquals(1, worker(b, "/select", "\"session_id\":\"s\""), "sealed bindings are shared");

        IMap<String, byte[]> map = nodes.get(0).hazelcast().getMap(ClusterBindings.MAP);
        PartitionKey p = new PartitionKey("model", "default");
        for (String session : new String[] {"unsealed", "badly-sealed"}) {
            SessionBindings.Binding forged = new SessionBindings.Binding(
                    p, session, new AffinityTarget(1, 0), new SessionBindings.Version(Long.MAX_VALUE, 7));
            byte[] bytes = AffinityEventCodec.encode(forged);
            map.put(ClusterBindings.key(forged), session.equals("unsealed") ? bytes : wronglySealed(bytes));
        }
        Await.until(
                "both replicas' passes refuse the forged records",
                Await.PATIENCE,
                () -> rejected(nodes, ClusterBindings.RECORDS, "unsigned") >= 2
                        && rejected(nodes, ClusterBindings.RECORDS, "bad_signature") >= 2);
        for (HttpJson r : List.of(a, b)) {
            assertEquals(2, worker(r, "/select", "\"session_id\":\"unsealed\""), "a forged binding steers nothing");
            assertEquals(2, worker(r, "/select", "\"session_id\":\"badly-sealed\""));
        }

        String bNode = nodes.get(1).membership().nodeId();
        SessionBindings.Binding pushed = new SessionBindings.Binding(
                p, "pushed", new AffinityTarget(1, 0), new SessionBindings.Version(Long.MAX_VALUE, 7));
        Throwable refused = nodes.get(0)
                .vertx()
                .eventBus()
                .request(ClusterBindings.ADDRESS + bNode, Buffer.buffer(AffinityEventCodec.encode(pushed)))
                .transform(ar -> Future.succeededFuture(ar.cause()))
                .toCompletionStage()
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        assertTrue(refused instanceof ReplyException r && r.failureCode() == 401, String.valueOf(refused));
        assertEquals(1, rejected(List.of(nodes.get(1)), ClusterBindings.PUSHES, "unsigned"));
        assertEquals(2, worker(b, "/select", "\"session_id\":\"pushed\""));
        assertEquals(1, worker(b, "/select", "\"session_id\":\"s\""), "the sealed binding stands");
    }

    /** The mark and a seal of zeros: the shape of a sealed value, without the token. */
    private static byte[] wronglySealed(byte[] bytes) {
        byte[] out = new byte[33 + bytes.length];
        out[0] = (byte) 0xA5;
        System.arraycopy(bytes, 0, out, 33, bytes.length);
        return out;
    }

    private static double rejected(List<IndexerNode> nodes, String source, String reason) {
        double n = 0;
        for (IndexerNode node : nodes) {
            MetricsPage page = MetricsPage.of(new HttpJson(node.httpPort()));
            String series =
                    "kvindexer_cluster_values_rejected_total{source=\"" + source + "\",reason=\"" + reason + "\"}";
            n += page.has(series) ? page.value(series) : 0;
        }
        return n;
    }
}
