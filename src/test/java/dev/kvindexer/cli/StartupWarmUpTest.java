package dev.kvindexer.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.LocalNode;
import java.net.ConnectException;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code --warm-up} runs real traffic through a node of its own and leaves nothing of it behind. */
class StartupWarmUpTest {
    @RegisterExtension
    static final LocalNode NODE = new LocalNode();

    @Test
    void aWarmUpFeedsAndQueriesItsOwnNodeAndLeavesTheProcessesOtherNodeAsItWas() throws Exception {
        String workers = NODE.http().get("/workers").body();
        String services = NODE.http().get("/services").body();

        StartupWarmUp.Report report = StartupWarmUp.run(2, Duration.ofSeconds(2));

        // each of 4 callers sends every one of its 12 requests at least once, on each of the 2 nodes
        assertTrue(report.queries() >= 2 * 4 * 12, "queries answered 200: " + report);
        assertTrue(report.blocks() > 0, "blocks published: " + report);
        assertThrows(
                ConnectException.class, () -> new Socket("127.0.0.1", report.port()).close(), "its node is closed");
        assertFalse(
                Thread.getAllStackTraces().keySet().stream()
                        .anyMatch(t -> t.getName().startsWith("warm-up-query-")),
                "its callers have ended");
        assertEquals(workers, NODE.http().get("/workers").body());
        assertEquals(services, NODE.http().get("/services").body());
        assertFalse(NODE.http().get("/metrics").body().contains("warm-up"), "no meter of its model here");
    }

    @Test
    void theFlagAndItsVariableSetTheWarmUpWhichIsOffByDefault() {
        assertEquals(0, ServeCommandTest.serve(Map.of()).warmUp);
        assertEquals(12, ServeCommandTest.serve(Map.of(), "--warm-up", "12").warmUp);
        assertEquals(7, ServeCommandTest.serve(Map.of("KVINDEXER_WARM_UP", "7")).warmUp);
    }

    @Test
    void aNegativeWarmUpIsAStartupErrorBeforeAnythingStarts() throws Exception {
        assertEquals(
                2,
                ServeCommandTest.serve(Map.of(), "--warm-up", "-1", "--port", "0")
                        .call());
    }
}
