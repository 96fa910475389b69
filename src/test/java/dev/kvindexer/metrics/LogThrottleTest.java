package dev.kvindexer.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A recurring warning costs one log line per interval, and that line says how many it stands for. */
class LogThrottleTest {
    private long now = 1_000;
    private final LogThrottle throttle = new LogThrottle(100, () -> now);

    @Test
    void theFirstOccurrenceOfEachIntervalIsLoggedWithTheCountHeldBack() {
        assertTrue(throttle.admit());
        assertEquals("", throttle.heldBackNote());
        int logged = 0;
        for (int i = 0; i < 28_000; i++) {
            now += i % 1000 == 0 ? 3 : 0;
            if (throttle.admit()) {
                logged++;
            }
        }
        assertEquals(0, logged, "28,000 gaps within one interval: no further line");
        now += 100 - 84;
        assertTrue(throttle.admit());
        assertEquals(" (28000 more since the last report)", throttle.heldBackNote());
        assertFalse(throttle.admit());
        assertEquals(1, throttle.heldBack());
        assertEquals(0, throttle.heldBack(), "reading resets the count");
    }
}
