package dev.kvindexer.ingest;

import static dev.kvindexer.ingest.ListenerState.ACTIVE;
import static dev.kvindexer.ingest.ListenerState.FAILED;
import static dev.kvindexer.ingest.ListenerState.PAUSED;
import static dev.kvindexer.ingest.ListenerState.PENDING;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
