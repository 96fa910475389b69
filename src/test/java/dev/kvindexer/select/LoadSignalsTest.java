package dev.kvindexer.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The busy thresholds as the environment gives them, and the line they draw (docs/api/selection.md#load-signals). */
class LoadSignalsTest {
    private static final String PREFILL = "DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD";
    private static final String DECODE = "DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD";

    @Test
    void thresholdsAreReadFromTheEnvironmentAndUnsetByDefault() {
        assertTrue(Double.isNaN(SelectionConfig.DEFAULTS.prefillBusyThreshold()));
        assertTrue(Double.isNaN(SelectionConfig.DEFAULTS.decodeBusyThreshold()));
        SelectionConfig set = SelectionConfig.fromEnvironment(Map.of(PREFILL, " 0.75", DECODE, "2"));
        assertEquals(0.75, set.prefillBusyThreshold());
        assertEquals(2.0, set.decodeBusyThreshold());
        assertEquals(
                SelectionConfig.DEFAULTS,
                SelectionConfig.fromEnvironment(Map.of(PREFILL, "busy", DECODE, "")),
                "unparsable thresholds stay unset, as other numbers keep their defaults");
        assertTrue(
                Double.isNaN(SelectionConfig.fromEnvironment(Map.of("DYN_ROUTER_QUEUE_THRESHOLD", "1"))
                        .prefillBusyThreshold()),
                "the queue threshold does not stand in for the prefill threshold");
    }

    @Test
    void aNegativeThresholdIsAStartupError() {
        for (String name : new String[] {PREFILL, DECODE}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class, () -> SelectionConfig.fromEnvironment(Map.of(name, "-0.5")));
            String field = name.equals(PREFILL)
                    ? "conditional_disagg_prefill_busy_threshold"
                    : "conditional_disagg_decode_busy_threshold";
            assertEquals("invalid KV router configuration: " + field + " must be >= 0", e.getMessage());
        }
    }

    @Test
    void aLoadExactlyOnTheLineIsNotOverIt() {
        assertFalse(LoadSignals.exceeds(8, 0.5, 16));
        assertTrue(LoadSignals.exceeds(9, 0.5, 16));
        assertFalse(LoadSignals.exceeds(0, 0, 8), "a zero threshold still needs some load");
        assertTrue(LoadSignals.exceeds(1, 0, 8));
        assertFalse(
                LoadSignals.exceeds(Long.MAX_VALUE, 1, -1L),
                "a capacity above Long.MAX_VALUE is the unsigned number it is, not a negative one");
    }
}
