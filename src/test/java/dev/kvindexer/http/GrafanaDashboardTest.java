package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.support.GrafanaDashboard;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.MetricsPage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/grafana's dashboard asks only for families a real node exports: every metric name in every panel's query is
 * on the /metrics page of a node with a worker, an event and a query behind it, and a data directory (whose families
 * only such a node declares).
 */
class GrafanaDashboardTest {
    private static final String SELECT_PREFIX = "kvindexer_select_";

    @TempDir
    Path dataDir;

    /** The directory is read when the node starts, after JUnit has set it. */
    @RegisterExtension
    final LocalNode indexer =
            new LocalNode(c -> c.withDurability(DurabilityConfig.inDirectory(dataDir, Duration.ofHours(1))));

    @Test
    void everyPanelQueriesFamiliesTheNodeExports() throws Exception {
        GrafanaDashboard dashboard = GrafanaDashboard.read();
        int panels = dashboard.panels();
        // The selection service's families are its own /metrics page's (SelectDashboardTest).
        Set<String> asked = dashboard.families(SELECT_PREFIX, false);
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
                        "kvindexer_gap_repairs_total",
                        "kvindexer_grpc_requests_total",
                        "kvindexer_grpc_request_duration_seconds",
                        "kvindexer_grpc_workers")),
                asked.toString());

        indexer.storeOneBlockAndQueryIt();
        indexer.startGrpc();
        Set<String> missing = new TreeSet<>(asked);
        missing.removeAll(MetricsPage.of(indexer.http()).types().keySet());
        assertEquals(Set.of(), missing, "families the dashboard asks for that no node exports");
    }
}
