package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.kvindexer.partition.ReplayRequest;
import org.junit.jupiter.api.Test;

/** How a replay's outcome is classified, with the reference's incomplete reasons. */
class ReplayOutcomeTest {
    @Test
    void aBoundedReplayMustDeliverEveryBatchInOrder() {
        ReplayOutcome whole = new ReplayOutcome(5, 8);
        whole.received(5);
        whole.received(6);
        whole.received(7);
        assertNull(whole.incompleteReason());
        assertEquals("empty", new ReplayOutcome(5, 8).incompleteReason());
        ReplayOutcome late = new ReplayOutcome(5, 8);
        late.received(6);
        late.received(7);
        assertEquals("started_after_requested", late.incompleteReason());
        ReplayOutcome holed = new ReplayOutcome(5, 8);
        holed.received(5);
        holed.received(7);
        assertEquals("non_contiguous", holed.incompleteReason());
        ReplayOutcome short_ = new ReplayOutcome(5, 8);
        short_.received(5);
        assertEquals("ended_before_target", short_.incompleteReason());
    }

    @Test
    void anOpenEndedReplayOfAnEngineThatPublishedNothingSinceIsComplete() {
        assertNull(new ReplayOutcome(42, ReplayRequest.OPEN_END).incompleteReason());
        ReplayOutcome late = new ReplayOutcome(42, ReplayRequest.OPEN_END);
        late.received(50);
        assertEquals("started_after_requested", late.incompleteReason());
        ReplayOutcome silent = new ReplayOutcome(42, ReplayRequest.OPEN_END);
        silent.timedOut();
        assertEquals("timeout", silent.incompleteReason(), "no answer at all is not an empty one");
    }
}
