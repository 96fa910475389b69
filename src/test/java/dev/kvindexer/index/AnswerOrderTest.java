package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A query's owners come out in answer order (worker id unsigned, then rank) however the owners came and went, wide
 * answers and narrow ones alike, and shared stores stay out of it.
 */
class AnswerOrderTest {
    private static final Comparator<OwnerMatch> ANSWER_ORDER = Comparator.<OwnerMatch, Long>comparing(
                    m -> m.workerId() ^ Long.MIN_VALUE)
            .thenComparingInt(OwnerMatch::dpRank);
    private static final long[] SYSTEM = {11, 12};
    private static final long[] TAIL = {13, 14, 15};
    private static final long[] PROMPT = {11, 12, 13, 14, 15};

    private final PartitionIndex index = new PartitionIndex(4);
    private final SplittableRandom rnd = new SplittableRandom(7);

    @Test
    void aWideAnswerIsInWorkerThenRankOrderThroughArrivalsAndDepartures() {
        List<Long> workers = new ArrayList<>();
        for (int w = 0; w < 300; w++) {
            // Negative ids sort after positive ones as unsigned numbers.
            long id = rnd.nextLong();
            workers.add(id);
            for (int rank = 3; rank >= 0; rank -= 1 + rnd.nextInt(2)) {
                index.store(id, rank, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
            }
        }
        for (int i = 0; i < 40; i++) {
            index.store(workers.get(i * 7), 0, StorageTier.DEVICE, true, SYSTEM[1], TAIL, TAIL);
        }
        assertInAnswerOrder(index.matchOwners(PROMPT, null).toList(), 300 * 2);

        index.removeWorker(workers.get(5));
        index.removeWorkerDpRank(workers.get(6), 3);
        index.markSharedStore(workers.get(7), true);
        index.store(0, 9, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        index.store(-1L, 0, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        List<OwnerMatch> after = index.matchOwners(PROMPT, null).toList();
        assertInAnswerOrder(after, 300 * 2);
        assertTrue(after.stream().noneMatch(m -> m.workerId() == workers.get(5) || m.workerId() == workers.get(7)));
        assertTrue(after.stream().noneMatch(m -> m.workerId() == workers.get(6) && m.dpRank() == 3));
        assertEquals(new OwnerMatch(0, 9, 2, 2, 2), after.get(0));
        assertEquals(new OwnerMatch(-1L, 0, 2, 2, 2), after.get(after.size() - 1));

        // Ordinary again, its blocks answer again, in their place.
        index.markSharedStore(workers.get(7), false);
        List<OwnerMatch> back = index.matchOwners(PROMPT, null).toList();
        assertInAnswerOrder(back, 300 * 2);
        assertTrue(back.stream().anyMatch(m -> m.workerId() == workers.get(7)));
    }

    @Test
    void aNarrowAnswerAmongManyOwnersIsInOrderToo() {
        for (int w = 0; w < 500; w++) {
            index.store(rnd.nextLong(), 0, StorageTier.DEVICE, false, 0, new long[] {w + 100}, new long[] {w + 100});
        }
        long[] holders = {-5L, 42, Long.MAX_VALUE, -5L, 3};
        int[] ranks = {1, 0, 0, 0, 2};
        for (int i = 0; i < holders.length; i++) {
            index.store(holders[i], ranks[i], StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
        }
        List<OwnerMatch> answer = index.matchOwners(PROMPT, null).toList();
        assertEquals(
                List.of(
                        new OwnerMatch(3, 2, 2, 2, 2),
                        new OwnerMatch(42, 0, 2, 2, 2),
                        new OwnerMatch(Long.MAX_VALUE, 0, 2, 2, 2),
                        new OwnerMatch(-5L, 0, 2, 2, 2),
                        new OwnerMatch(-5L, 1, 2, 2, 2)),
                answer);
    }

    @Test
    void anAnswerOfAFewOwnersInEightIsInOrderThroughDepartures() {
        List<Long> holders = new ArrayList<>();
        for (int w = 0; w < 800; w++) {
            long id = rnd.nextLong();
            if (w % 8 == 3) {
                holders.add(id);
                index.store(id, w % 3, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
            } else {
                index.store(id, 0, StorageTier.DEVICE, false, 0, new long[] {w + 100}, new long[] {w + 100});
            }
        }
        assertEquals(
                holders.size(),
                assertInAnswerOrder(index.matchOwners(PROMPT, null).toList(), 100));
        index.removeWorker(holders.get(0));
        List<OwnerMatch> after = index.matchOwners(PROMPT, null).toList();
        assertEquals(holders.size() - 1, assertInAnswerOrder(after, 100));
        // the same query again: the bitmap of places was left clear
        assertEquals(after, index.matchOwners(PROMPT, null).toList());
    }

    @Test
    void theTieredAnswerIsInTheSameOrder() {
        for (int w = 0; w < 50; w++) {
            long id = rnd.nextLong();
            index.store(id, w % 3, StorageTier.DEVICE, false, 0, SYSTEM, SYSTEM);
            index.store(id, w % 3, StorageTier.HOST_PINNED, false, 0, SYSTEM, SYSTEM);
        }
        TieredMatch tiered = index.matchTiered(PROMPT);
        List<OwnerMatch> device = new ArrayList<>();
        for (int i = 0; i < tiered.device().workers().length; i++) {
            int blocks = tiered.device().blocks()[i];
            device.add(
                    new OwnerMatch(tiered.device().workers()[i], tiered.device().ranks()[i], blocks, blocks, blocks));
        }
        assertInAnswerOrder(device, 50);
    }

    /** Asserts the answer is in answer order, one entry an owner, and at least half {@code atLeast} long; its size. */
    private static int assertInAnswerOrder(List<OwnerMatch> answer, int atLeast) {
        assertTrue(answer.size() >= atLeast / 2, "answer of " + answer.size());
        List<OwnerMatch> sorted = new ArrayList<>(answer);
        sorted.sort(ANSWER_ORDER);
        assertEquals(sorted, answer);
        for (int i = 1; i < answer.size(); i++) {
            assertTrue(ANSWER_ORDER.compare(answer.get(i - 1), answer.get(i)) < 0, "one entry per owner");
        }
        return answer.size();
    }
}
