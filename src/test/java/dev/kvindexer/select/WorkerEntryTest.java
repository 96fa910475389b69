package dev.kvindexer.select;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which ranks' listeners a new record of a schedulable worker replaces (docs/api/selection.md#updating-a-schedulable-worker). */
class WorkerEntryTest {
    private static WorkerEntry ranks(long start, long size, Map<String, String> endpoints, String replay, Long tokens) {
        return new WorkerEntry(
                1,
                "model",
                "default",
                "http://w1",
                4L,
                start,
                size,
                null,
                endpoints,
                replay,
                tokens,
                null,
                null,
                List.of(),
                Map.of(),
                Lifecycle.SCHEDULABLE,
                List.of());
    }

    private static final Map<String, String> THREE = Map.of("0", "tcp://a:1", "1", "tcp://b:1", "2", "tcp://c:1");

    @Test
    void onlyRanksThatLeaveTheRangeOrChangeAnEndpointAreReplaced() {
        WorkerEntry before = ranks(0, 3, THREE, null, 8192L);
        assertEquals(List.of(), before.ranksReplacedBy(ranks(0, 3, THREE, null, 4096L)), "a capacity change");
        assertEquals(List.of(2L), before.ranksReplacedBy(ranks(0, 2, THREE, null, 8192L)), "rank 2 left the range");
        assertEquals(List.of(0L), before.ranksReplacedBy(ranks(1, 3, THREE, null, 8192L)), "the range moved up one");
        assertEquals(
                List.of(1L),
                before.ranksReplacedBy(
                        ranks(0, 3, Map.of("0", "tcp://a:1", "1", "tcp://b:2", "2", "tcp://c:1"), null, 8192L)));
    }

    @Test
    void aChangedReplayEndpointReplacesEveryRank() {
        WorkerEntry before = ranks(0, 1, Map.of("0", "tcp://a:1"), "tcp://a:2", null);
        assertEquals(List.of(0L), before.ranksReplacedBy(ranks(0, 1, Map.of("0", "tcp://a:1"), "tcp://a:3", null)));
        assertEquals(List.of(0L), before.ranksReplacedBy(ranks(0, 1, Map.of("0", "tcp://a:1"), null, null)));
        assertEquals(List.of(), before.ranksReplacedBy(ranks(0, 1, Map.of("0", "tcp://a:1"), "tcp://a:2", 1L)));
    }
}
