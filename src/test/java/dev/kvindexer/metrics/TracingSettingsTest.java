package dev.kvindexer.metrics;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which settings make tracing read the SDK's configuration at all: any name the SDK would read as turning it on. */
class TracingSettingsTest {
    @Test
    void anySettingThatCanTurnTracingOnIsSeenInTheFormsTheSdkReads() {
        assertTrue(Tracing.mayAskForTraces(Map.of("otel.traces.exporter", "none")));
        assertTrue(Tracing.mayAskForTraces(Map.of("OTEL-EXPORTER-OTLP-ENDPOINT", "http://127.0.0.1:9")));
        assertTrue(Tracing.mayAskForTraces(Map.of("otel.exporter.otlp.traces.endpoint", "http://127.0.0.1:9")));
    }

    @Test
    void otherSettingsLeaveTheSdkUnread() {
        assumeFalse(Tracing.mayAskForTraces(Map.of()), "this process's environment names a tracing setting");
        assertFalse(Tracing.mayAskForTraces(Map.of("otel.service.name", "idle", "otel.sdk.disabled", "false")));
        assertFalse(Tracing.configure(Map.of("otel.service.name", "idle")).on());
    }
}
