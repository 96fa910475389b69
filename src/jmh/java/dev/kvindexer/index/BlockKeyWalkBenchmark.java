package dev.kvindexer.index;

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
 * The C++ Conductor's query walk over a filled context, its keys known in advance (no SHA-256): what looking up a
 * prompt's 512 block keys among about 821,000 costs. Eight engines; engine e holds the first 64 (e + 1) blocks of each
 * of 1,604 prompts of 512 blocks, so every walk's eight cursors stop one after another along the prompt.
 * {@code layout=refilled}: the engines were cleared and filled again while another owner kept a key, as after engines
 * re-register beside others, so a prompt's slots come back from the free list scattered instead of side by side.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class BlockKeyWalkBenchmark {
    static final int ENGINES = 8;
    static final int BLOCKS = 512;
    static final int PROMPTS = 1_604;
    static final int QUERIES = 256;

    @Param({"fresh", "refilled"})
    public String layout;

    BlockKeyIndex index;
    long[][] prompts;
    int[] owners;
    int[] out;
    int next;

    @Setup(Level.Trial)
    public void fill() {
        SplittableRandom rnd = new SplittableRandom(42);
        index = new BlockKeyIndex();
        prompts = new long[PROMPTS][BLOCKS];
        for (long[] p : prompts) {
            for (int i = 0; i < BLOCKS; i++) {
                p[i] = rnd.nextLong();
            }
        }
        store();
        if (layout.equals("refilled")) {
            // One key held by another owner keeps the index from emptying: an emptied one starts its slots over.
            index.storeGpu(ENGINES, prompts[0][0]);
            for (int e = 0; e < ENGINES; e++) {
                index.clearGpu(e);
            }
            store();
        }
        owners = new int[ENGINES];
        for (int e = 0; e < ENGINES; e++) {
            owners[e] = e;
        }
        out = new int[3 * ENGINES];
        System.gc();
    }

    void store() {
        for (long[] p : prompts) {
            for (int e = 0; e < ENGINES; e++) {
                for (int i = 0; i < BLOCKS * (e + 1) / ENGINES; i++) {
                    index.storeGpu(e, p[i]);
                }
            }
        }
    }

    /** One prompt's walk by all eight engines; prompts rotate so their keys are not all in cache. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int walk() {
        long[] p = prompts[(next++ * 7) % PROMPTS];
        index.walk(
                new BlockKeyIndex.PromptKeys() {
                    @Override
                    public int blocks() {
                        return BLOCKS;
                    }

                    @Override
                    public long key(int i) {
                        return p[i];
                    }
                },
                owners,
                out);
        return out[0];
    }
}
