package dev.kvindexer.load;

import dev.kvindexer.event.PartitionKey;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What a selection reads of the slot tracker: the prompt's active depth on every rank, then each rank's load, as
 * the chooser reads them. 64 workers of 16 ranks, 2,000 active requests of 64 prompts (512 blocks, sharing prefixes of
 * 0 to 384 blocks), as {@code SelectBench} books them.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ActiveLoadsBenchmark {
    private static final PartitionKey MODEL = new PartitionKey("m", null);
    private static final int WORKERS = 64;
    private static final int RANKS = 16;
    private static final int BLOCKS = 512;

    private SlotTracker tracker;
    private long[][] prompts;
    private int next;

    @Setup
    public void setUp() {
        tracker = new SlotTracker(Long.MAX_VALUE / 4);
        for (int w = 0; w < WORKERS; w++) {
            tracker.register(MODEL, 1000 + w, 16, 0, RANKS);
        }
        SplittableRandom random = new SplittableRandom(7);
        prompts = new long[64][BLOCKS];
        for (long[] prompt : prompts) {
            int shared = random.nextInt(4) * 128;
            for (int b = 0; b < BLOCKS; b++) {
                prompt[b] = b < shared ? b + 1 : random.nextLong();
            }
        }
        for (int r = 0; r < 2000; r++) {
            tracker.add(
                    MODEL,
                    "r" + r,
                    1000 + random.nextInt(WORKERS),
                    random.nextInt(RANKS),
                    prompts[random.nextInt(prompts.length)],
                    8192);
        }
    }

    @Benchmark
    public long everyRank() {
        long[] prompt = prompts[next++ & (prompts.length - 1)];
        SlotTracker.ActiveLoads loads = tracker.activeLoads(MODEL, prompt);
        long sum = 0;
        for (int w = 0; w < WORKERS; w++) {
            for (int rank = 0; rank < RANKS; rank++) {
                SlotTracker.ActiveLoad load = loads.of(1000 + w, rank);
                sum += load.activeDepth() + load.prefillTokens();
            }
        }
        return sum;
    }
}
