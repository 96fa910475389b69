package dev.kvindexer.selectservice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.GrafanaDashboard;
import dev.kvindexer.support.MetricsPage;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** deploy/grafana's selection-service panels ask only for families a selection service exports. */
class SelectDashboardTest {
    @Test
    void everySelectionPanelQueriesFamiliesTheServiceExports() throws Exception {
        Set<String> asked = GrafanaDashboard.read().families(SelectMetrics.PREFIX, true);
        assertTrue(
                asked.containsAll(List.of(
                        "kvindexer_select_predicted_blocks_total",
                        "kvindexer_select_predicted_entries",
                        "kvindexer_select_active_reservations")),
                asked.toString());
        try (SelectServiceFixture service = SelectServiceFixture.start(Map.of())) {
            Set<String> missing = new TreeSet<>(asked);
            missing.removeAll(MetricsPage.of(service.http).types().keySet());
            assertEquals(Set.of(), missing, "families the dashboard asks for that the service does not export");
        }
    }
}
