package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SessionRequests.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.HttpLimits;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Session bindings shared by every replica of a real Hazelcast cluster on 127.0.0.1, as reservations are
 * (docs/api/selection.md#session-affinity): a booking's binding is on every replica before its client hears of it, a
 * replica that joins later catches up from the cluster's map, and all of them route the session to one worker. Worker
 * 1 carries a heavy booking (itself shared), so a selection that lands there was steered by a binding.
 */
class SessionAffinityClusterTest {
    private static final Map<String, String> ENV = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");
    private final ClusterNodes cluster = new ClusterNodes();

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** A replica with session affinity, catching up with the cluster's maps every 500 ms, given the whole catalog. */
    private HttpJson replica() throws Exception {
        IndexerNode node = cluster.start();
        SelectServiceConfig config = new SelectServiceConfig(
                        "127.0.0.1", 0, 120_000, 4096, 268_435_456L, 500, 0, List.of(), HttpLimits.DEFAULT)
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
        Await.until(
                "a replica that joined later catches up with the reservations and the bindings",
                Await.PATIENCE,
                () -> worker(c, "/select", "\"session_id\":\"unbound\"") == 2
                        && worker(c, "/select", "\"session_id\":\"s\"") == 1
                        && worker(c, "/select", "\"session_id\":\"t\"") == 1);
        assertEquals(1, worker(c, "/select_and_reserve", "\"session_id\":\"s\""));
    }
}
