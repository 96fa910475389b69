package dev.kvindexer.http;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.TieredQueryResult;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Writing a {@code /query_tiered_by_hash} answer as the bytes the response carries: a fleet's device matches (random
 * worker ids over the u64 range) and a host tier holding a tenth of them.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class TieredAnswerBenchmark {
    @Param({"8", "1000"})
    int owners;

    TieredQueryResult reply;

    @Setup
    public void build() {
        SplittableRandom rnd = new SplittableRandom(42);
        TieredMatch.Owners device = owners(rnd, owners);
        TieredMatch.Owners host = owners(rnd, Math.max(1, owners / 10));
        reply = new TieredQueryResult(
                16, new TieredMatch(device, List.of(new TieredMatch.Tier(StorageTier.HOST_PINNED, host))), 0);
    }

    private static TieredMatch.Owners owners(SplittableRandom rnd, int n) {
        long[] workers = new long[n];
        int[] ranks = new int[n];
        int[] blocks = new int[n];
        for (int i = 0; i < n; i++) {
            workers[i] = rnd.nextLong();
            ranks[i] = rnd.nextInt(8);
            blocks[i] = 1 + rnd.nextInt(512);
        }
        return new TieredMatch.Owners(workers, ranks, blocks);
    }

    @Benchmark
    public Object render() {
        return TieredJson.bytes(reply);
    }
}
