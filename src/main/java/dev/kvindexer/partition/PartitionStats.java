package dev.kvindexer.partition;

import java.util.List;

/**
 * A partition's size figures: {@code heldPerTier[t]} (block, holder) pairs of tier ordinal t, {@code deviceBlocks}
 * distinct device blocks, the heap its index holds, and what each engine rank holds and has sent.
 */
public record PartitionStats(long[] heldPerTier, long deviceBlocks, long memoryBytes, List<Engine> engines) {
    /**
     * One engine rank: blocks it holds by tier ordinal, blocks it stored and removed, events applied, and the
     * wall-clock millis of its last event (of its registration while it has sent none).
     */
    public record Engine(
            long workerId,
            int dpRank,
            long[] heldPerTier,
            long storedBlocks,
            long removedBlocks,
            long events,
            long lastEventMillis) {}
}
