package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.hash.LocalHashes;
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
 * A token query's hashing and match, as Dynamo's {@code /query} runs them after its JSON is read: every block hashed
 * before the walk ({@code eager}), or each when the walk reaches it ({@code lazy}). The prompts share their first
 * {@code sharedPercent} of blocks with what 16 engines hold and are their own after that, the shape of a system
 * prompt and a conversation followed by a user's new text.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class TokenQueryBenchmark {
    static final int TOKENS = 8192;
    static final int ENGINES = 16;
    static final int PROMPTS = 64;
    static final long SEED = BlockHasher.BASE_SEED;

    @Param({"16", "512"})
    int blockSize;

    @Param({"25", "100"})
    int sharedPercent;

    PartitionIndex index;
    int[][] prompts;
    int next;

    @Setup(Level.Trial)
    public void build() {
        SplittableRandom rnd = new SplittableRandom(42);
        index = new PartitionIndex(blockSize);
        int blocks = TOKENS / blockSize;
        int shared = blocks * sharedPercent / 100;
        prompts = new int[PROMPTS][];
        for (int p = 0; p < PROMPTS; p++) {
            int[] held = rnd.ints(TOKENS, 0, 150_000).toArray();
            long[] locals = BlockHasher.localHashes(held, blockSize, SEED);
            index.store(p % ENGINES + 1L, 0, StorageTier.DEVICE, false, 0, locals, locals);
            int[] asked = rnd.ints(TOKENS, 0, 150_000).toArray();
            System.arraycopy(held, 0, asked, 0, shared * blockSize);
            prompts[p] = asked;
        }
        // Both forms give the same answer, or the comparison means nothing.
        for (int[] prompt : prompts) {
            long[] all = BlockHasher.localHashes(prompt, blockSize, SEED);
            if (!index.matchOwners(all, null)
                    .toList()
                    .equals(index.matchLazily(LocalHashes.ofTokens(prompt, blockSize, SEED))
                            .matches()
                            .toList())) {
                throw new IllegalStateException("lazy and eager answers differ");
            }
        }
    }

    private int[] nextPrompt() {
        int[] p = prompts[next];
        next = (next + 1) % PROMPTS;
        return p;
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public OwnerMatches eager() {
        long[] all = BlockHasher.localHashes(nextPrompt(), blockSize, SEED);
        return index.matchOwners(all, index.sequenceHashesFor(all));
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public OwnerMatches lazy() {
        return index.matchLazily(LocalHashes.ofTokens(nextPrompt(), blockSize, SEED))
                .matches();
    }
}
