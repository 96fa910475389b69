package dev.kvindexer.select;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A feature accepted but not applied is reported once per process, however often it is named. */
class NotAppliedTest {
    @Test
    void eachFeatureIsReportedOnce() {
        assertTrue(NotApplied.report("a feature only this test names", "nothing"));
        assertFalse(NotApplied.report("a feature only this test names", "nothing"));
        assertTrue(NotApplied.report("another feature only this test names", "nothing"));
    }
}
