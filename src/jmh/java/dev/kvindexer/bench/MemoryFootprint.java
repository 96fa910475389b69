package dev.kvindexer.bench;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.index.PartitionIndex;
import java.util.SplittableRandom;

/**
 * Heap bytes per (block, holder) pair of the index core at about ten million pairs, measured as the
 * heap in use after full GCs with the index built, minus the same before, divided by the pairs held.
 *
 * <p>Prompts of 128 blocks, each stored whole by {@code holders} distinct workers out of 64 (engine hashes are the
 * rolling sequence hashes, equal across workers). {@code holders} = 1 is the worst case (every pair pays for its own
 * tree node); larger values are prefixes shared by several replicas, as a router sees popular prompts.
 *
 * <pre>java -Xmx12g -cp target/benchmarks.jar dev.kvindexer.bench.MemoryFootprint [holders] [pairs]</pre>
 */
public final class MemoryFootprint {
    private static final int WORKERS = 64;
    private static final int BLOCKS = 128;

    private MemoryFootprint() {}

    public static void main(String[] args) {
        int holders = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        long pairs = args.length > 1 ? Long.parseLong(args[1]) : 10_000_000L;
        int prompts = (int) (pairs / ((long) BLOCKS * holders));

        long before = usedAfterGc();
        PartitionIndex index = new PartitionIndex(16);
        SplittableRandom rnd = new SplittableRandom(42);
        long[] local = new long[BLOCKS];
        for (int p = 0; p < prompts; p++) {
            for (int b = 0; b < BLOCKS; b++) {
                local[b] = rnd.nextLong();
            }
            long[] engine = BlockHasher.sequenceHashes(local);
            int first = rnd.nextInt(WORKERS);
            for (int h = 0; h < holders; h++) {
                index.store((first + h) % WORKERS, 0, StorageTier.DEVICE, false, 0, engine, local);
            }
        }
        long after = usedAfterGc();
        long held = index.holderEntryCount();
        System.out.printf(
                "holders per block %d: %,d (block, holder) pairs on %,d tree nodes, %d workers%n",
                holders, held, index.blockCount(), WORKERS);
        System.out.printf(
                "heap %,d bytes -> %.1f bytes per (block, holder) pair, %.1f bytes per tree node%n",
                after - before, (after - before) / (double) held, (after - before) / (double) index.blockCount());
        System.out.printf(
                "the index's own account (PartitionIndex.memoryBytes, what --max-index-memory limits): %,d bytes,"
                        + " %.1f %% of the measured heap%n",
                index.memoryBytes(), 100.0 * index.memoryBytes() / (after - before));
        // Keep the index reachable until after the measurement.
        System.out.println("owners " + index.ownerCount());
    }

    private static long usedAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }
}
