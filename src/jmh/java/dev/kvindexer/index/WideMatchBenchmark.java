package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * A prompt whose first blocks every engine of a large fleet holds (the Mooncake conversation trace's shape: one
 * system prompt on all engines, each conversation on a few): the match and the route's per-instance breakdown, whose
 * cost is the answer's width rather than the walk.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class WideMatchBenchmark {
    static final int SYSTEM_BLOCKS = 2;
    static final int CONVERSATION_BLOCKS = 24;
    static final int QUERIES = 1024;

    @Param({"1000"})
    int engines;

    /**
     * Copies of the fleet, each with a system prompt of its own (Dynamo's worker duplication): a query's answer is
     * one copy's engines among all copies' owners.
     */
    @Param({"1", "7"})
    int copies;

    PartitionIndex index;
    long[][] queries;
    int next;

    @Setup(Level.Trial)
    public void build() {
        SplittableRandom rnd = new SplittableRandom(42);
        index = new PartitionIndex(512);
        long[][] system = new long[copies][SYSTEM_BLOCKS];
        long[][] workers = new long[copies][engines];
        for (int c = 0; c < copies; c++) {
            for (int i = 0; i < SYSTEM_BLOCKS; i++) {
                system[c][i] = rnd.nextLong();
            }
        }
        // Worker ids as engines draw them: random, so an answer in id order is not in worker order; the copies'
        // engines register interleaved, as a fleet's do.
        for (int e = 0; e < engines; e++) {
            for (int c = 0; c < copies; c++) {
                workers[c][e] = rnd.nextLong();
                index.store(workers[c][e], 0, StorageTier.DEVICE, false, 0, system[c], system[c]);
            }
        }
        queries = new long[QUERIES][];
        for (int q = 0; q < QUERIES; q++) {
            int c = q % copies;
            long[] prompt = new long[SYSTEM_BLOCKS + CONVERSATION_BLOCKS];
            System.arraycopy(system[c], 0, prompt, 0, SYSTEM_BLOCKS);
            for (int i = SYSTEM_BLOCKS; i < prompt.length; i++) {
                prompt[i] = rnd.nextLong();
            }
            long[] tail = java.util.Arrays.copyOfRange(prompt, SYSTEM_BLOCKS, prompt.length);
            long[] tailEngine = tail.clone();
            for (int h = 0; h < 3; h++) {
                index.store(
                        workers[c][rnd.nextInt(engines)],
                        0,
                        StorageTier.DEVICE,
                        true,
                        system[c][SYSTEM_BLOCKS - 1],
                        tailEngine,
                        tail);
            }
            queries[q] = prompt;
        }
        System.gc();
    }

    /** The partition's answer: the owners with their reach, as the route receives it. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public OwnerMatches match() {
        long[] q = queries[next];
        next = (next + 1) & (QUERIES - 1);
        return index.matchOwners(q, null);
    }

    /** The match and the per-instance breakdown the {@code /query} route renders. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int matchAndBreakdown() {
        long[] q = queries[next];
        next = (next + 1) & (QUERIES - 1);
        return TierBreakdown.of(index.matchOwners(q, null), 512).instanceCount();
    }
}
