package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.event.WorkerRank;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A fleet that shares a system prompt answers from the kept answer to the prompt's wide start: every answer must be
 * the reference model's while owners store and drop that prompt (the start's holders change), arrive and leave (the
 * owners' order changes), and the conversations below it come and go.
 */
class WideAnswersTest {
    private static final long[] SYSTEM = {1, 2};
    private static final long[] SYSTEM_ENGINE = {9_001, 9_002};

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4})
    void answersAsTheReferenceWhileTheFleetChanges(long seed) {
        Random rnd = new Random(seed);
        PartitionIndex index = new PartitionIndex(4);
        ReferenceIndex ref = new ReferenceIndex();
        int workers = 170;
        for (int w = 0; w < workers; w++) {
            for (int r = 0; r < 2; r++) {
                store(index, ref, new WorkerRank(w * 7_919L, r), null, SYSTEM_ENGINE, SYSTEM);
            }
        }
        for (int step = 0; step < 1_000; step++) {
            WorkerRank o = new WorkerRank(rnd.nextInt(workers + 20) * 7_919L, rnd.nextInt(2));
            int dice = rnd.nextInt(100);
            if (dice < 45) {
                // A conversation under the system prompt, on this owner.
                int n = 1 + rnd.nextInt(3);
                long[] locals = new long[n];
                long[] engine = new long[n];
                long prev = SYSTEM_ENGINE[1];
                for (int i = 0; i < n; i++) {
                    locals[i] = 3 + rnd.nextInt(3);
                    engine[i] = prev * 5 + locals[i];
                    prev = engine[i];
                }
                store(index, ref, o, SYSTEM_ENGINE[1], engine, locals);
            } else if (dice < 60) {
                store(index, ref, o, null, SYSTEM_ENGINE, SYSTEM);
            } else if (dice < 75) {
                IndexFixture.remove(index, ref, o, StorageTier.DEVICE, new long[] {SYSTEM_ENGINE[rnd.nextInt(2)]});
            } else if (dice < 85) {
                IndexFixture.clear(index, ref, o);
            } else if (dice < 90) {
                IndexFixture.removeWorker(index, ref, o.workerId());
            }
            for (int q = 0; q < 4; q++) {
                long[] query = new long[2 + rnd.nextInt(4)];
                query[0] = SYSTEM[0];
                query[1] = rnd.nextInt(8) == 0 ? 7 : SYSTEM[1];
                for (int i = 2; i < query.length; i++) {
                    query[i] = 3 + rnd.nextInt(3);
                }
                Map<WorkerRank, OwnerMatch> expected = ref.match(query);
                // Twice: the second answer is built from what the first kept.
                for (int again = 0; again < 2; again++) {
                    assertEquals(expected, IndexFixture.byOwner(index.match(query)), "seed " + seed + " step " + step);
                }
            }
        }
    }

    @Test
    void aWideAnswerComesInTheOwnersOrder() {
        PartitionIndex index = new PartitionIndex(4);
        ReferenceIndex ref = new ReferenceIndex();
        for (int w = 0; w < 300; w++) {
            store(index, ref, new WorkerRank(-1L - w * 104_729L, 0), null, SYSTEM_ENGINE, SYSTEM);
        }
        store(index, ref, new WorkerRank(-1L, 0), SYSTEM_ENGINE[1], new long[] {777}, new long[] {3});
        for (int again = 0; again < 2; again++) {
            OwnerMatches m = index.matchOwners(new long[] {1, 2, 3}, null);
            assertEquals(300, m.size());
            for (int i = 1; i < m.size(); i++) {
                assertEquals(-1, Long.compareUnsigned(m.workerId(i - 1), m.workerId(i)), "in worker order");
            }
            assertEquals(IndexFixture.byOwner(m.toList()), ref.match(new long[] {1, 2, 3}));
        }
    }

    /**
     * Answers built from a kept one share its workers: each answer must keep its entries when the fleet changes and
     * the kept answer is built again.
     */
    @Test
    void anAnswerKeepsItsEntriesWhenTheKeptOneIsBuiltAgain() {
        PartitionIndex index = new PartitionIndex(4);
        ReferenceIndex ref = new ReferenceIndex();
        for (int w = 0; w < 300; w++) {
            for (int r = 0; r < 1 + w % 3; r++) {
                store(index, ref, new WorkerRank(w * 7_919L, r), null, SYSTEM_ENGINE, SYSTEM);
            }
        }
        long[] query = {1, 2, 3};
        List<OwnerMatches> answers = new ArrayList<>();
        List<List<OwnerMatch>> asAnswered = new ArrayList<>();
        // More rounds than a matcher keeps answers: its entries are filled again.
        for (int round = 0; round < 20; round++) {
            for (int again = 0; again < 4; again++) {
                // Owners that go deeper come and go: an answer without any shares the kept answer's reaches whole.
                WorkerRank deeper = new WorkerRank((round + 5) * 7_919L, 0);
                if (again == 1) {
                    store(index, ref, deeper, SYSTEM_ENGINE[1], new long[] {777}, new long[] {3});
                } else if (again == 3) {
                    IndexFixture.remove(index, ref, deeper, StorageTier.DEVICE, new long[] {777});
                }
                OwnerMatches m = index.matchOwners(query, null);
                answers.add(m);
                asAnswered.add(m.toList());
                assertEquals(
                        ref.match(query),
                        IndexFixture.byOwner(asAnswered.get(asAnswered.size() - 1)),
                        "round " + round);
            }
            IndexFixture.removeWorker(index, ref, round * 7_919L);
            store(index, ref, new WorkerRank(1_000_003L + round, 0), null, SYSTEM_ENGINE, SYSTEM);
        }
        for (int i = 0; i < answers.size(); i++) {
            assertEquals(asAnswered.get(i), answers.get(i).toList(), "answer " + i);
            // Its instances, found once for every answer built from one kept answer, are those of the same entries.
            assertEquals(
                    TierBreakdown.of(asAnswered.get(i), 4).instances(),
                    TierBreakdown.of(answers.get(i), 4).instances(),
                    "answer " + i);
        }
    }

    /**
     * An engine that leaves and another that takes its place between two queries, holding the same blocks: the walk
     * finds the same owners' bits at every level, and only the owners' order tells the kept answer is stale.
     */
    @Test
    void anEngineReplacedBetweenTwoQueriesIsAnswered() {
        PartitionIndex index = new PartitionIndex(4);
        ReferenceIndex ref = new ReferenceIndex();
        for (int w = 0; w < 300; w++) {
            store(index, ref, new WorkerRank(w * 7_919L, 0), null, SYSTEM_ENGINE, SYSTEM);
        }
        long[] query = {1, 2, 3};
        assertEquals(ref.match(query), IndexFixture.byOwner(index.match(query)));
        IndexFixture.removeWorker(index, ref, 7_919L);
        store(index, ref, new WorkerRank(5, 0), null, SYSTEM_ENGINE, SYSTEM);
        assertEquals(ref.match(query), IndexFixture.byOwner(index.match(query)));
    }

    /** More fleets than a matcher keeps answers for, queried in turn: kept or not, every answer is the reference's. */
    @Test
    void moreWideStartsThanKeptAnswersAnswerAsTheReference() {
        PartitionIndex index = new PartitionIndex(4);
        ReferenceIndex ref = new ReferenceIndex();
        int fleets = 10;
        for (int fleet = 0; fleet < fleets; fleet++) {
            for (int w = 0; w < 260; w++) {
                store(
                        index,
                        ref,
                        new WorkerRank(fleet * 1_000_000L + w, 0),
                        null,
                        new long[] {9_000 + fleet},
                        new long[] {10 + fleet});
            }
            store(
                    index,
                    ref,
                    new WorkerRank(fleet * 1_000_000L, 0),
                    9_000L + fleet,
                    new long[] {8_000 + fleet},
                    new long[] {3});
        }
        for (int q = 0; q < 2_000; q++) {
            long[] query = {10 + q % fleets, 3};
            assertEquals(ref.match(query), IndexFixture.byOwner(index.match(query)), "query " + q);
        }
    }

    private static void store(
            PartitionIndex index, ReferenceIndex ref, WorkerRank o, Long parent, long[] engine, long[] locals) {
        assertEquals(
                ref.store(o, StorageTier.DEVICE, parent, engine, locals),
                index.store(
                        o.workerId(),
                        o.dpRank(),
                        StorageTier.DEVICE,
                        parent != null,
                        parent == null ? 0 : parent,
                        engine,
                        locals));
    }
}
