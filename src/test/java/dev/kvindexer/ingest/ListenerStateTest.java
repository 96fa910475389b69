package dev.kvindexer.ingest;

import static dev.kvindexer.ingest.ListenerState.ACTIVE;
import static dev.kvindexer.ingest.ListenerState.FAILED;
import static dev.kvindexer.ingest.ListenerState.PAUSED;
import static dev.kvindexer.ingest.ListenerState.PENDING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ListenerStateTest {
    @Test
    void instanceStatusPriorityIsFailedPendingActivePaused() {
        assertEquals(FAILED, ListenerState.aggregate(List.of(PAUSED, ACTIVE, PENDING, FAILED)));
        assertEquals(PENDING, ListenerState.aggregate(List.of(PAUSED, ACTIVE, PENDING)));
        assertEquals(ACTIVE, ListenerState.aggregate(List.of(PAUSED, ACTIVE)));
        assertEquals(PAUSED, ListenerState.aggregate(List.of(PAUSED)));
    }

    @Test
    void transitionsFollowTheLifecycle() {
        Listener l = new Listener(1, 0, "tcp://h:1", null, null, 0);
        assertEquals(PENDING, l.state());
        l.markActive();
        assertEquals(ACTIVE, l.state());
        assertEquals(ACTIVE, l.pause(), "returns the state it paused from");
        assertEquals(PAUSED, l.state());
        l.markActive();
        assertEquals(PAUSED, l.state(), "a late connection event does not un-pause");
        assertEquals(PAUSED, l.pause(), "pausing twice reports the state that forbids it");
        Listener next = l.nextGeneration(1);
        assertEquals(PENDING, next.state());
        next.markFailed("boom");
        assertEquals(FAILED, next.state());
        assertEquals("boom", next.lastError());
        assertEquals(FAILED, next.pause(), "failed cannot be paused");
    }

    @Test
    void anErrorIsCurrentUntilTheListenerConnectsAgainThenPast() {
        Listener l = new Listener(1, 0, "tcp://h:1", null, null, 0);
        assertNull(l.currentError());
        l.recordError("cannot connect: refused; retrying");
        assertEquals("cannot connect: refused; retrying", l.currentError(), "pending, and why");
        l.markActive();
        assertNull(l.currentError(), "connected: the error is history");
        assertEquals("cannot connect: refused; retrying", l.pastError());
        long at = l.lastErrorAtMillis();
        assertTrue(at > 0 && at <= System.currentTimeMillis());
        l.markFailed("connection lost: closed by the publisher; reconnecting");
        assertEquals("connection lost: closed by the publisher; reconnecting", l.currentError());
        assertNull(l.pastError());
        l.markActive();
        assertEquals("connection lost: closed by the publisher; reconnecting", l.pastError());
        l.recordError("skipped a malformed batch: x");
        assertEquals(
                "skipped a malformed batch: x",
                l.currentError(),
                "an error while active stands until the next connect");
    }
}
