package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.event.WorkerRank;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.LocalHashes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Token queries hashed as the walk goes, on several threads at once, against the reference index: hundreds of engines
 * share a system prompt, so most answers are built from a kept wide one; every answer is kept and compared again
 * after the later rounds' stores, removes, clears and rebuilds, so an answer handed out never changes.
 */
class ConcurrentTokenQueriesTest {
    private static final int THREADS = 4;
    private static final int ROUNDS = 8;
    private static final int QUERIES = 120;

    private record Query(int[] tokens, long seed, Map<WorkerRank, OwnerMatch> expected) {}

    private record Answered(Query query, OwnerMatches answer, List<OwnerMatch> asAnswered) {}

    @ParameterizedTest
    @ValueSource(longs = {2, 3})
    void answersMatchTheReferenceAndNeverChangeAfterwards(long s) throws Exception {
        Random rnd = new Random(s);
        int bs = 1 + (int) (s % 4);
        boolean lowerTiers = s % 3 == 0;
        long lora = BlockHasher.seedFor("lora-x", null);
        PartitionIndex index = new PartitionIndex(bs);
        ReferenceIndex ref = new ReferenceIndex();
        int[] system = rnd.ints(3 * bs, 0, 1000).toArray();
        List<int[]> conversations = new ArrayList<>();
        for (int c = 0; c < 12; c++) {
            int[] t = Arrays.copyOf(system, system.length + (1 + rnd.nextInt(8)) * bs);
            for (int i = system.length; i < t.length; i++) {
                t[i] = rnd.nextInt(3); // a small alphabet: conversations share blocks and branch
            }
            conversations.add(t);
        }
        int workers = 300 + rnd.nextInt(100);
        List<Answered> all = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                // Changes, with no query running, as under the partition's write lock.
                int changes = round == 0 ? workers * 2 : 30;
                for (int k = 0; k < changes; k++) {
                    change(
                            rnd,
                            index,
                            ref,
                            workers,
                            round == 0 && k < changes - 20,
                            system,
                            conversations,
                            bs,
                            lora,
                            lowerTiers);
                }
                List<Query> queries = new ArrayList<>();
                for (int i = 0; i < QUERIES; i++) {
                    int[] prompt = rnd.nextInt(5) == 0 ? system : conversations.get(rnd.nextInt(conversations.size()));
                    int[] t = new int[rnd.nextInt(prompt.length + 2 * bs + 1)]; // none, partial and whole blocks
                    for (int j = 0; j < t.length; j++) {
                        t[j] = j < prompt.length ? prompt[j] : rnd.nextInt(3);
                    }
                    long seed = rnd.nextInt(10) == 0 ? lora : BlockHasher.BASE_SEED;
                    queries.add(new Query(t, seed, ref.match(BlockHasher.localHashes(t, bs, seed))));
                }
                List<Future<List<Answered>>> running = new ArrayList<>();
                for (int th = 0; th < THREADS; th++) {
                    int offset = th * 53;
                    running.add(pool.submit(() -> {
                        List<Answered> out = new ArrayList<>();
                        for (int i = 0; i < queries.size(); i++) {
                            Query q = queries.get((i * 7 + offset) % queries.size());
                            OwnerMatches lazy = index.matchLazily(LocalHashes.ofTokens(q.tokens(), bs, q.seed()))
                                    .matches();
                            OwnerMatches eager =
                                    index.matchOwners(BlockHasher.localHashes(q.tokens(), bs, q.seed()), null);
                            List<OwnerMatch> answered = lazy.toList();
                            assertTrue(q.expected().equals(IndexFixture.byOwner(answered)), () -> differs("lazy", q));
                            assertTrue(
                                    q.expected().equals(IndexFixture.byOwner(eager.toList())),
                                    () -> differs("eager", q));
                            out.add(new Answered(q, lazy, answered));
                        }
                        return out;
                    }));
                }
                for (Future<List<Answered>> f : running) {
                    all.addAll(f.get());
                }
            }
        } finally {
            pool.shutdownNow();
        }
        long wide = all.stream()
                .filter(a -> a.answer().size() >= WideAnswers.WIDE_OWNERS)
                .count();
        assertTrue(wide > all.size() / 4, "most answers are wide: " + wide + " of " + all.size());
        for (Answered a : all) {
            assertTrue(
                    a.asAnswered().equals(a.answer().toList()),
                    () -> "an answer of " + a.asAnswered().size() + " owners changed after it was handed out");
            assertTrue(
                    TierBreakdown.of(a.asAnswered(), bs)
                            .instances()
                            .equals(TierBreakdown.of(a.answer(), bs).instances()),
                    "an answer's breakdown changed after it was handed out");
        }
    }

    private static void change(
            Random rnd,
            PartitionIndex index,
            ReferenceIndex ref,
            int workers,
            boolean systemOnly,
            int[] system,
            List<int[]> conversations,
            int bs,
            long lora,
            boolean lowerTiers) {
        WorkerRank o = new WorkerRank(rnd.nextInt(workers) * 7_919L, rnd.nextInt(2));
        int dice = rnd.nextInt(100);
        long seed = rnd.nextInt(10) == 0 ? lora : BlockHasher.BASE_SEED;
        int[] prompt = systemOnly ? system : conversations.get(rnd.nextInt(conversations.size()));
        long[] locals = BlockHasher.localHashes(prompt, bs, seed);
        long[] chain = BlockHasher.sequenceHashes(locals);
        if (dice < 70 || systemOnly) {
            int to = 1 + rnd.nextInt(locals.length);
            StorageTier tier = StorageTier.DEVICE;
            int from = 0;
            if (lowerTiers && rnd.nextInt(4) == 0) {
                tier = StorageTier.HOST_PINNED;
                from = rnd.nextInt(to);
            }
            long[] hashes = Arrays.copyOfRange(chain, from, to);
            long[] local = Arrays.copyOfRange(locals, from, to);
            Long parent = from > 0 ? chain[from - 1] : null;
            ref.store(o, tier, parent, hashes, local);
            index.store(o.workerId(), o.dpRank(), tier, parent != null, parent == null ? 0 : parent, hashes, local);
        } else if (dice < 85) {
            IndexFixture.remove(index, ref, o, StorageTier.DEVICE, new long[] {chain[rnd.nextInt(chain.length)]});
        } else if (dice < 95) {
            IndexFixture.clear(index, ref, o);
        } else {
            IndexFixture.removeWorker(index, ref, o.workerId());
        }
    }

    private static String differs(String how, Query q) {
        return "the " + how + " answer to a " + q.tokens().length + "-token prompt differs from the reference's "
                + q.expected().size() + " owners";
    }
}
