package dev.kvindexer.bench;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.PartitionIndex;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Replays the Mooncake conversation trace through 16 simulated engines on the index core, in process,
 * one thread, and reports block operations per second (each stored, removed and queried block is one, as Dynamo's
 * Flash Indexer post counts) beside the same operations on a raw primitive hash map.
 *
 * <pre>java -cp target/benchmarks.jar dev.kvindexer.bench.TraceReplay trace [passes] [engines] [capacity]</pre>
 *
 * <p>The trace is named on the command line: the whole Mooncake trace is not kept in the repository.
 */
public final class TraceReplay {
    private TraceReplay() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: TraceReplay <trace.jsonl> [passes] [engines] [capacity]");
            System.exit(2);
        }
        Path trace = Path.of(args[0]);
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 30;
        int engines = args.length > 2 ? Integer.parseInt(args[2]) : 16;
        int capacity = args.length > 3 ? Integer.parseInt(args[3]) : 16_384;
        int blockSize = 512;

        TraceOps ops = TraceOps.record(trace, engines, capacity, blockSize);
        TraceOps.describe(ops).forEach(System.out::println);

        // Warm-up passes, then timed ones; a fresh index (and map) per pass, so each pass replays the whole history.
        double[] index = new double[passes];
        double[] raw = new double[passes];
        long sink = 0;
        for (int w = 0; w < Math.max(5, passes / 3); w++) {
            sink += ops.replayOn(new PartitionIndex(blockSize));
            sink += ops.replayOnRawMap(new Long2IntOpenHashMap());
        }
        PartitionIndex last = null;
        for (int p = 0; p < passes; p++) {
            // Alternate the two loops so drift of the machine (GC, JIT, other load) touches both alike.
            PartitionIndex fresh = new PartitionIndex(blockSize);
            long t0 = System.nanoTime();
            sink += ops.replayOn(fresh);
            long t1 = System.nanoTime();
            Long2IntOpenHashMap map = new Long2IntOpenHashMap();
            long t2 = System.nanoTime();
            sink += ops.replayOnRawMap(map);
            long t3 = System.nanoTime();
            index[p] = ops.operations() / ((t1 - t0) / 1e9);
            raw[p] = ops.operations() / ((t3 - t2) / 1e9);
            last = fresh;
        }
        long held = last.heldBlocks(StorageTier.DEVICE);
        if (held != ops.heldAtEnd) {
            throw new IllegalStateException(
                    "replayed index holds " + held + " device blocks, engines hold " + ops.heldAtEnd);
        }
        double indexMedian = median(index);
        double rawMedian = median(raw);
        System.out.printf(
                "index core: median %.2f M block-ops/s (min %.2f, max %.2f) over %d passes, 1 thread = per core%n",
                indexMedian / 1e6,
                Arrays.stream(index).min().orElse(0) / 1e6,
                Arrays.stream(index).max().orElse(0) / 1e6,
                passes);
        System.out.printf(
                "raw long-key map: median %.2f M block-ops/s (min %.2f, max %.2f)%n",
                rawMedian / 1e6,
                Arrays.stream(raw).min().orElse(0) / 1e6,
                Arrays.stream(raw).max().orElse(0) / 1e6);
        System.out.printf("ratio index / raw: %.1f %%%n", 100 * indexMedian / rawMedian);
        System.out.printf(
                "end state: %,d device blocks held (= the engines'), %,d tree nodes; sink %d%n",
                held, last.blockCount(), sink);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
