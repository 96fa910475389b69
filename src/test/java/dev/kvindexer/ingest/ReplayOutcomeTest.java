package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.kvindexer.partition.ReplayRequest;
import org.junit.jupiter.api.Test;

/** How a replay's answer is judged (docs/protocol/zmq.md#sequence-tracking-and-gap-rules). */
class ReplayOutcomeTest {
    private static ReplayOutcome received(long start, long end, long... seqs) {
        ReplayOutcome o = new ReplayOutcome(start, end);
        for (long s : seqs) {
            o.received(s);
        }
        return o;
    }

    @Test
    void aHoleReplayedWholeIsComplete() {
        assertNull(received(5, 8, 5, 6, 7).incompleteReason());
    }

    @Test
    void aHoleAnsweredWithTheEndMarkerAloneIsEmpty() {
        assertEquals("empty", received(5, 8).incompleteReason());
    }

    @Test
    void aCatchUpFindingNothingAfterTheWatermarkIsComplete() {
        // The engine published nothing while the node was away (a graceful stop, idle engines): nothing is missing.
        assertNull(received(41, ReplayRequest.OPEN_END).incompleteReason());
        assertNull(received(41, ReplayRequest.OPEN_END, 41, 42).incompleteReason());
    }

    @Test
    void aCatchUpStartingPastTheWatermarkFellShort() {
        assertEquals(
                "started_after_requested",
                received(41, ReplayRequest.OPEN_END, 50, 51).incompleteReason());
    }

    @Test
    void aCatchUpThatGotOnlyBatchesItDidNotAskForOrNoAnswerIsNotComplete() {
        ReplayOutcome skipped = received(41, ReplayRequest.OPEN_END);
        skipped.outOfRange(3);
        assertEquals("empty", skipped.incompleteReason());
        ReplayOutcome timedOut = received(41, ReplayRequest.OPEN_END);
        timedOut.timedOut();
        assertEquals("timeout", timedOut.incompleteReason());
    }

    @Test
    void aHoleReplayedLateWithAGapOrShortIsIncomplete() {
        assertEquals("started_after_requested", received(5, 8, 6, 7).incompleteReason());
        assertEquals("non_contiguous", received(5, 8, 5, 7).incompleteReason());
        assertEquals("ended_before_target", received(5, 8, 5).incompleteReason());
    }
}
