package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.DurabilitySettings;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.MetricsPage;
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
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/grafana's dashboard asks only for families a real node exports: every metric name in every panel's query is
 * on the /metrics page of a node with a worker, an event and a query behind it, and a data directory (whose families
 * only such a node declares).
 */
class GrafanaDashboardTest {
    @TempDir
    Path dataDir;

    /** The directory is read when the node starts, after JUnit has set it. */
    @RegisterExtension
    final LocalNode indexer =
            new LocalNode(c -> c.withDurability(DurabilitySettings.inDirectory(dataDir, Duration.ofHours(1))));

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
                        "dynamo_kvindexer_request_duration_seconds",
                        "kvindexer_snapshot_last_write_timestamp_seconds",
                        "kvindexer_snapshot_writes_total",
                        "kvindexer_inexact_streams",
                        "kvindexer_gap_repairs_total")),
                asked.toString());

        indexer.storeOneBlockAndQueryIt();
        Set<String> missing = new TreeSet<>(asked);
        missing.removeAll(MetricsPage.of(indexer.http()).types().keySet());
        assertEquals(Set.of(), missing, "families the dashboard asks for that no node exports");
    }
}
