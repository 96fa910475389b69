package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.metrics.EventCounters;
import java.util.List;
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
 * What one batch costs a partition that serves a fleet: each invocation is one live batch of the next engine in turn,
 * through the stream's sequencer, applied, and then the partition's memory re-measured as its actor does after every
 * change. The cost must not grow with the number of engines.
 */
@State(Scope.Benchmark)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+IgnoreUnrecognizedVMOptions", "-XX:+UseTransparentHugePages"})
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class FleetApplyBenchmark {
    /** Blocks each engine holds before measuring: the fleet's resident state. */
    static final int RESIDENT = 16;
    /** Blocks a measured batch stores (and the engine's next batch removes). */
    static final int BATCH_BLOCKS = 4;

    @Param({"100", "10000"})
    int engines;

    Partition partition;
    MemoryBudget.Share memory;
    long[] seq;
    /** Per engine: the chain its next batch removes, or null when its next batch stores one. */
    long[][] pending;

    long[][] chains;
    int next;

    @Setup(Level.Trial)
    public void build() {
        partition = new Partition(
                new PartitionKey("m", "default"), 16, null, new EventCounters(), new Watermarks(), r -> {});
        memory = MemoryBudget.UNLIMITED.share();
        seq = new long[engines];
        pending = new long[engines][];
        chains = new long[engines][];
        for (int e = 0; e < engines; e++) {
            partition.openStream(new StreamSpec(worker(e), 0, 1, null));
            long[] resident = new long[RESIDENT];
            for (int i = 0; i < RESIDENT; i++) {
                resident[i] = hash(e, i);
            }
            live(e, new KvEvent.Stored(StorageTier.DEVICE, false, 0, resident, resident));
            long[] chain = new long[BATCH_BLOCKS];
            for (int i = 0; i < BATCH_BLOCKS; i++) {
                chain[i] = hash(e, RESIDENT + i);
            }
            chains[e] = chain;
        }
        memory.changed(partition.index());
    }

    @Benchmark
    public long applyOneBatch() {
        int e = next;
        next = e + 1 == engines ? 0 : e + 1;
        long[] chain = chains[e];
        if (pending[e] == null) {
            live(e, new KvEvent.Stored(StorageTier.DEVICE, true, hash(e, RESIDENT - 1), chain, chain));
            pending[e] = chain;
        } else {
            live(e, new KvEvent.Removed(StorageTier.DEVICE, chain));
            pending[e] = null;
        }
        memory.changed(partition.index());
        return seq[e];
    }

    private void live(int e, KvEvent event) {
        partition.onLive(worker(e), 0, 1, new EventBatch(seq[e]++, EventBatch.NO_RANK, List.of(event), 0, 0, 0));
    }

    private static long worker(int e) {
        return 1_000 + e;
    }

    private static long hash(int e, int i) {
        long h = (e * 1_000_003L + i) * 0x9E3779B97F4A7C15L;
        return h ^ (h >>> 29);
    }
}
