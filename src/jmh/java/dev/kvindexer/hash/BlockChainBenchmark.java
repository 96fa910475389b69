package dev.kvindexer.hash;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What hashing a prompt's blocks costs: the 8,192-token prompt of the C++ Conductor's query (512 blocks of 16 tokens,
 * vLLM's {@code sha256_cbor}), every block's key computed in order as a query's walk asks for them.
 */
@State(Scope.Thread)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class BlockChainBenchmark {
    private static final int BLOCK_SIZE = 16;

    private VllmBlockHasher hasher;
    private int[] tokens;

    @Setup
    public void prompt() {
        hasher = new VllmBlockHasher(new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0"));
        tokens = new SplittableRandom(7).ints(8192, 0, 32_000).toArray();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public long chain() {
        VllmBlockHasher.Chain chain = hasher.chain(tokens, BLOCK_SIZE, null, null);
        long last = 0;
        for (int i = 0; i < chain.blocks(); i++) {
            last = chain.nextKey();
        }
        return last;
    }
}
