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
 * A fleet unregistered engine by engine (a rollout, a scale-down): each engine holds a system prompt every engine
 * holds and conversations of its own, so the tree is many times larger than what one engine holds. One invocation
 * removes every engine of a freshly built partition.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class WorkerRemovalBenchmark {
    static final int SYSTEM_BLOCKS = 2;
    static final int CONVERSATIONS = 4;
    static final int CONVERSATION_BLOCKS = 32;

    @Param({"1000"})
    int engines;

    PartitionIndex index;
    long[] workers;

    @Setup(Level.Invocation)
    public void build() {
        SplittableRandom rnd = new SplittableRandom(42);
        index = new PartitionIndex(512);
        long[] system = {rnd.nextLong(), rnd.nextLong()};
        workers = new long[engines];
        for (int e = 0; e < engines; e++) {
            workers[e] = rnd.nextLong();
            index.store(workers[e], 0, StorageTier.DEVICE, false, 0, system, system);
            for (int c = 0; c < CONVERSATIONS; c++) {
                long[] tail = new long[CONVERSATION_BLOCKS];
                for (int i = 0; i < tail.length; i++) {
                    tail[i] = rnd.nextLong();
                }
                index.store(workers[e], 0, StorageTier.DEVICE, true, system[SYSTEM_BLOCKS - 1], tail, tail);
            }
        }
    }

    /** Every engine removed, one after the other. */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public boolean removeEveryEngine() {
        for (long w : workers) {
            index.removeWorker(w);
        }
        return index.isEmpty();
    }
}
