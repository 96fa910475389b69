package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * deploy/grafana's dashboard asks only for families a real node exports: every metric name in every panel's query is
 * on the /metrics page of a node with a worker, an event and a query behind it.
 */
class GrafanaDashboardTest {
    private static final Path DASHBOARD = Path.of("deploy", "grafana", "kvindexer-dashboard.json");
    private static final Pattern METRIC = Pattern.compile("\\b((?:kvindexer|dynamo)_[a-z0-9_]+)");

    @Test
    void everyPanelQueriesFamiliesTheNodeExports() throws Exception {
        JsonObject dashboard = new JsonObject(Files.readString(DASHBOARD));
        Set<String> asked = new TreeSet<>();
        int panels = 0;
        for (Object p : dashboard.getJsonArray("panels")) {
            JsonArray targets = ((JsonObject) p).getJsonArray("targets");
            if (targets == null) {
                continue;
            }
            panels++;
            for (Object t : targets) {
                Matcher m = METRIC.matcher(((JsonObject) t).getString("expr"));
                while (m.find()) {
                    asked.add(m.group(1).replaceAll("_(bucket|sum|count)$", ""));
                }
            }
        }
        assertTrue(panels >= 10, "a dashboard, not a stub: " + panels + " panels");
        assertTrue(
                asked.containsAll(List.of(
                        "kvindexer_query_match_ratio",
                        "kvindexer_query_zero_match_total",
                        "kvindexer_query_matching_instances",
                        "kvindexer_engine_blocks_stored_total",
                        "kvindexer_engine_blocks_removed_total",
                        "kvindexer_engine_last_event_age_seconds",
                        "dynamo_kvrouter_kv_cache_events_applied",
                        "dynamo_kvindexer_request_duration_seconds")),
                asked.toString());

        IndexerNode node = IndexerNode.start(ServeConfig.local(0));
        try (TestPublisher engine = new TestPublisher()) {
            HttpJson http = new HttpJson(node.httpPort());
            assertEquals(
                    201,
                    http.post(
                                    "/register",
                                    "{\"instance_id\":1,\"endpoint\":\"" + engine.endpoint()
                                            + "\",\"model_name\":\"m\",\"block_size\":4}")
                            .statusCode());
            engine.awaitSubscriber();
            engine.publish(
                    "",
                    0,
                    BatchEncoder.batch(
                            BatchEncoder.Format.VLLM_MAP,
                            1.0,
                            List.of(new EngineEvent.Store(
                                    new long[] {1}, null, new int[] {0, 1, 2, 3}, 4, "GPU", null)),
                            0));
            Await.until(
                    "the event applied",
                    Duration.ofSeconds(10),
                    () -> node.counters().appliedCount("stored", "ok") == 1);
            assertEquals(
                    200,
                    http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[0,1,2,3]}")
                            .statusCode());
            Set<String> exported = new TreeSet<>();
            for (String line : http.get("/metrics").body().split("\n")) {
                if (line.startsWith("# TYPE ")) {
                    exported.add(line.split(" ")[2]);
                }
            }
            Set<String> missing = new TreeSet<>(asked);
            missing.removeAll(exported);
            assertEquals(Set.of(), missing, "families the dashboard asks for that no node exports");
        } finally {
            node.close();
        }
    }
}
