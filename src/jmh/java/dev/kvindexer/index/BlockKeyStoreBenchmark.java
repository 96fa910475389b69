package dev.kvindexer.index;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The C++ Conductor's context applying what engines publish, without decoding: eight engines are cleared (their
 * registrations ended) and store their blocks again, the fill of {@link BlockKeyWalkBenchmark} (821,248 blocks), as
 * the peers' ingest bursts do. One operation is a whole clear and refill; divide by the blocks for a block's cost.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class BlockKeyStoreBenchmark {
    BlockKeyWalkBenchmark fill;

    @Setup
    public void fill() {
        fill = new BlockKeyWalkBenchmark();
        fill.layout = "fresh";
        fill.fill();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int clearAndRefill() {
        for (int e = 0; e < BlockKeyWalkBenchmark.ENGINES; e++) {
            fill.index.clearGpu(e);
        }
        fill.store();
        return fill.index.keyCount();
    }
}
