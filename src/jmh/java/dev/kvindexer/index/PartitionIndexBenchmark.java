package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The index core's two targets: store+remove block throughput on a large tree, and 128-block match latency
 * on a tree of about 1 M blocks held by 64 workers with shared prefixes.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-Xms3g",
            "-Xmx3g",
            // As the README advises for production (Linux-only, hence the ignore elsewhere): see BENCHMARKS.md.
            "-XX:+IgnoreUnrecognizedVMOptions",
            "-XX:+UseTransparentHugePages"
        })
public class PartitionIndexBenchmark {
    static final int WORKERS = 64;
    static final int PROMPT_BLOCKS = 128;
    static final int SYSTEM_PROMPTS = 32;
    static final int SYSTEM_BLOCKS = 32;
    static final int CONVERSATIONS = 10_400; // × 96 unique blocks + the system prompts ≈ 1 M nodes
    static final int CHURN_BLOCKS = 16;
    static final int SHARED_BLOCKS = 64;
    static final int QUERIES = 4096;

    PartitionIndex index;
    long[][] convLocals;
    long[][] convEngines;
    int[] convSystem;
    long[][] queries;
    int nextQuery;
    long[] everyoneQuery;

    // Churn: each worker stores, then removes, a fresh 16-block chain under its first conversation's prefix.
    long[][] churnEngines;
    long[][] churnLocals;
    long[] churnParent;

    // Shared: each worker stores, then removes, the first 64 blocks of a conversation another worker holds.
    long[][] sharedEngines;
    long[][] sharedLocals;

    @Setup(Level.Trial)
    public void build() {
        SplittableRandom rnd = new SplittableRandom(42);
        index = new PartitionIndex(16);
        long[][] sysLocals = new long[SYSTEM_PROMPTS][SYSTEM_BLOCKS];
        for (long[] s : sysLocals) {
            for (int i = 0; i < s.length; i++) {
                s[i] = rnd.nextLong();
            }
        }
        convLocals = new long[CONVERSATIONS][PROMPT_BLOCKS];
        convEngines = new long[CONVERSATIONS][PROMPT_BLOCKS];
        convSystem = new int[CONVERSATIONS];
        int[] firstConvOf = new int[WORKERS];
        Arrays.fill(firstConvOf, -1);
        for (int c = 0; c < CONVERSATIONS; c++) {
            int sys = rnd.nextInt(SYSTEM_PROMPTS);
            convSystem[c] = sys;
            long[] loc = convLocals[c];
            System.arraycopy(sysLocals[sys], 0, loc, 0, SYSTEM_BLOCKS);
            for (int i = SYSTEM_BLOCKS; i < PROMPT_BLOCKS; i++) {
                loc[i] = rnd.nextLong();
            }
            // Engine hashes are chained like vLLM's, so equal prefixes get equal engine hashes.
            long prev = 0;
            for (int i = 0; i < PROMPT_BLOCKS; i++) {
                prev = mix(prev, loc[i]);
                convEngines[c][i] = prev;
            }
            // Each conversation lives on 1–3 workers (a router spreads but also repeats).
            int holders = 1 + rnd.nextInt(3);
            for (int h = 0; h < holders; h++) {
                int w = rnd.nextInt(WORKERS);
                index.store(w, 0, StorageTier.DEVICE, false, 0, convEngines[c], loc);
                if (firstConvOf[w] < 0) {
                    firstConvOf[w] = c;
                }
            }
        }
        queries = new long[QUERIES][];
        for (int q = 0; q < QUERIES; q++) {
            int c = rnd.nextInt(CONVERSATIONS);
            long[] loc = convLocals[c].clone();
            // A third of the prompts diverge somewhere after the system prompt (a new turn).
            if (q % 3 == 0) {
                for (int i = SYSTEM_BLOCKS + rnd.nextInt(PROMPT_BLOCKS - SYSTEM_BLOCKS); i < PROMPT_BLOCKS; i++) {
                    loc[i] = rnd.nextLong();
                }
            }
            queries[q] = loc;
        }
        // Worst case: one 128-block prompt held in full by all 64 workers.
        everyoneQuery = convLocals[0];
        for (int w = 0; w < WORKERS; w++) {
            index.store(w, 0, StorageTier.DEVICE, false, 0, convEngines[0], convLocals[0]);
        }
        churnEngines = new long[WORKERS][CHURN_BLOCKS];
        churnLocals = new long[WORKERS][CHURN_BLOCKS];
        churnParent = new long[WORKERS];
        for (int w = 0; w < WORKERS; w++) {
            int c = firstConvOf[w] < 0 ? 0 : firstConvOf[w];
            churnParent[w] = convEngines[c][PROMPT_BLOCKS / 2];
            long prev = churnParent[w];
            for (int i = 0; i < CHURN_BLOCKS; i++) {
                churnLocals[w][i] = rnd.nextLong();
                prev = mix(prev, churnLocals[w][i]);
                churnEngines[w][i] = prev;
            }
        }
        sharedEngines = new long[WORKERS][];
        sharedLocals = new long[WORKERS][];
        for (int w = 0; w < WORKERS; w++) {
            int c = firstConvOf[(w + 1) % WORKERS] < 0 ? 1 : firstConvOf[(w + 1) % WORKERS];
            sharedEngines[w] = Arrays.copyOf(convEngines[c], SHARED_BLOCKS);
            sharedLocals[w] = Arrays.copyOf(convLocals[c], SHARED_BLOCKS);
        }
        // Measure from a settled heap, not the collections still owed for building a 1 M-node fixture.
        System.gc();
        System.out.println("\ndevice blocks " + index.blockCount() + ", holder entries " + index.holderEntryCount());
    }

    private static long mix(long prev, long local) {
        long h = prev * 0x9E3779B97F4A7C15L + local;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        return h ^ (h >>> 33);
    }

    /** Every worker stores a 16-block chain and then removes it: 64 × 32 block operations. */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(WORKERS * CHURN_BLOCKS * 2)
    public int storeRemoveBlocks() {
        return storeThenRemove(churnParent, churnEngines, churnLocals);
    }

    /**
     * Every worker stores 64 blocks another worker already holds (a router sending a conversation's next turn
     * elsewhere), then removes them: 64 × 128 block operations on nodes that exist.
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(WORKERS * SHARED_BLOCKS * 2)
    public int storeRemoveHeldElsewhere() {
        return storeThenRemove(null, sharedEngines, sharedLocals);
    }

    /** Each worker stores its chain (under its parent, when there are parents), then each removes it. */
    private int storeThenRemove(long[] parents, long[][] engines, long[][] locals) {
        int missing = 0;
        for (int w = 0; w < WORKERS; w++) {
            boolean under = parents != null;
            index.store(w, 0, StorageTier.DEVICE, under, under ? parents[w] : 0, engines[w], locals[w]);
        }
        for (int w = 0; w < WORKERS; w++) {
            missing += index.remove(w, 0, StorageTier.DEVICE, engines[w]);
        }
        return missing;
    }

    /** A 128-block prompt: shared system prompt, then a stored or diverging conversation. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public OwnerMatches match128() {
        long[] q = queries[nextQuery];
        nextQuery = (nextQuery + 1) & (QUERIES - 1);
        return index.matchOwners(q, null);
    }

    /** Worst case for the walk: all 64 workers hold the whole 128-block prompt. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public OwnerMatches match128AllWorkersHoldAll() {
        return index.matchOwners(everyoneQuery, null);
    }
}
