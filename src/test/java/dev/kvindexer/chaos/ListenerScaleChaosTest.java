package dev.kvindexer.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.ChaosReport;
import dev.kvindexer.support.ListenerScale;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node filled to its listener ceiling (derived from this process's descriptor limit;
 * {@code -Dkvindexer.scale.listeners=N} for another count, a multiple of 100): every listener active and applying a
 * batch at about one descriptor and no thread each, and the registration after the last refused with a 429.
 */
@Tag("chaos")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ListenerScaleChaosTest {
    @Test
    void aNodeFilledToItsListenerCeiling() throws Exception {
        ListenerScale.Figures f =
                ListenerScale.run(Integer.getInteger("kvindexer.scale.listeners", 0), Duration.ofMinutes(4), true);
        int n = f.listeners() + 1;
        ChaosReport report = new ChaosReport("listener-scale");
        report.line("| figure | value |");
        report.line("|---|---|");
        report.line(
                "| listeners (one model, %d per publisher port, publishers in another JVM) | %,d of a ceiling of %,d |",
                ListenerScale.PER_PORT, n, f.capacity());
        report.line("| registered over HTTP (8 clients) | %.1f s |", f.registerSeconds());
        report.line(
                "| then all active / all applied a batch | %.1f s / %.1f s more |",
                f.activeSeconds(), f.appliedSeconds());
        report.line(
                "| node descriptors grown | %,d (%.3f per listener) |", f.descriptors(), f.descriptorsPerListener());
        report.line(
                "| node threads grown (JVM-internal and test client threads left out) | %d (process: %d) |",
                f.threads(), f.processThreads());
        report.line(
                "| one registration more | %d %s |",
                f.oneMore().statusCode(), f.oneMore().body());
        assertTrue(
                f.descriptors() >= f.listeners() && f.descriptors() <= f.listeners() + f.listeners() / 50,
                "descriptors grew by " + f.descriptors() + " for " + f.listeners() + " listeners");
        assertEquals(0, f.threads(), "node threads grew");
        if (n == f.capacity()) {
            assertEquals(429, f.oneMore().statusCode(), f.oneMore().body());
            assertTrue(
                    f.oneMore().body().contains("listener limit reached: " + n + " listeners"),
                    f.oneMore().body());
        }
    }
}
