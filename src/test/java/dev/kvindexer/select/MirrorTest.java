package dev.kvindexer.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.PartitionKey;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A replica's record of a reservation caught up step by step, its version taken from the record, not the steps. */
class MirrorTest {
    private static final PartitionKey P = new PartitionKey("model", "default");

    private final SelectionState state = new SelectionState(
            SelectionConfig.DEFAULTS,
            () -> 1_000,
            new SplittableRandom(1),
            new PendingSelections(60_000, 16, 1 << 20),
            1024,
            1 << 20,
            0);

    MirrorTest() {
        state.roster()
                .putSchedulable(new WorkerEntry(
                        7,
                        "model",
                        "default",
                        "http://w7",
                        16L,
                        0L,
                        1L,
                        null,
                        Map.of(),
                        null,
                        null,
                        null,
                        null,
                        List.of(),
                        Map.of(),
                        Lifecycle.SCHEDULABLE,
                        List.of()));
    }

    private static Reservation record(boolean prefillDone, long outputBlocks, long version) {
        return new Reservation(
                "r1",
                P,
                16,
                7,
                0,
                null,
                new long[] {1, 2, 3},
                48,
                true,
                null,
                prefillDone,
                outputBlocks,
                Double.NaN,
                5,
                99,
                version);
    }

    @Test
    void aRecordIsCaughtUpAndKeepsItsVersion() {
        Mirror mirror = state.mirror();
        assertTrue(mirror.upsert(record(true, 3, 5)));
        Reservation held = mirror.record("r1");
        assertTrue(held.prefillDone());
        assertEquals(3, held.outputBlocks());
        assertEquals(5, held.version(), "four steps caught up, the record's version kept");

        assertFalse(mirror.upsert(record(true, 4, 5)), "not newer: nothing changes");
        assertEquals(3, mirror.record("r1").outputBlocks());

        assertTrue(mirror.upsert(record(true, 4, 6)));
        assertEquals(4, mirror.record("r1").outputBlocks());
        assertEquals(6, mirror.record("r1").version());

        assertTrue(mirror.forget("r1", 99));
        assertNull(mirror.record("r1"));
        assertFalse(mirror.upsert(record(true, 5, 7)), "an ended booking is not brought back");
    }
}
