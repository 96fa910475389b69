package dev.kvindexer.partition;

import dev.kvindexer.index.PartitionIndex;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The heap all partitions of a node may hold in their indexes together ({@code --max-index-memory}). Each partition
 * reports its index's size after every change. When the sum is over the budget, the reporting partition evicts its
 * least recently used blocks down to its share of nine tenths of the budget, or further, by at most what it grew since
 * it last reported, when that alone would leave the sum over the budget; every other partition does the same on its
 * next change, so partitions shrink in proportion to their size and the next changes do not evict again at once.
 */
public final class MemoryBudget {
    /** No limit: for tests and tools that build partitions without a node. */
    public static final MemoryBudget UNLIMITED = new MemoryBudget(Long.MAX_VALUE);
    /** What a partition holds beside its index: its actor, its consumer, its streams' maps (measured, rounded up). */
    static final long PARTITION_OVERHEAD_BYTES = 16 * 1024;
    /** What a partition holds however empty: its index's first arrays and its overhead. */
    public static final long PARTITION_FIXED_BYTES = new PartitionIndex(16).memoryBytes() + PARTITION_OVERHEAD_BYTES;
    /**
     * The part of the budget the partitions' fixed costs may take together. The rest is for blocks, which eviction
     * can give back; fixed costs it cannot, so past this share a new partition is refused.
     */
    static final double FIXED_SHARE = 0.5;

    private final long limit;
    private final AtomicLong used = new AtomicLong();
    private final LongAdder evicted = new LongAdder();
    /** Counts the times the sum went over the budget; {@link #shrink} is the factor the last time asked for. */
    private final AtomicLong overruns = new AtomicLong();

    private volatile double shrink = 1.0;

    public MemoryBudget(long limitBytes) {
        this.limit = limitBytes;
    }

    public long limitBytes() {
        return limit;
    }

    /** Heap the node's indexes hold, as last reported by each partition. */
    public long usedBytes() {
        return used.get();
    }

    /** Blocks evicted to stay within the budget, over the node's life. */
    public long evictedBlocks() {
        return evicted.sum();
    }

    /**
     * Why a node with {@code partitions} partitions cannot create one more, or null when it can: their fixed costs
     * together would pass {@link #FIXED_SHARE} of the budget.
     */
    public String refuseNewPartition(int partitions) {
        long fixed = (partitions + 1L) * PARTITION_FIXED_BYTES;
        if (limit == Long.MAX_VALUE || fixed <= limit * FIXED_SHARE) {
            return null;
        }
        return "the index memory budget (--max-index-memory, " + limit + " bytes) holds no more partitions: "
                + partitions + " partitions take " + (partitions * PARTITION_FIXED_BYTES)
                + " bytes of it before any block, and their fixed cost may take at most half of it";
    }

    /** One partition's account: touched only by that partition's actor. */
    Share share() {
        return new Share();
    }

    final class Share {
        private long reported;
        private long evictedBefore;
        private long overrunsSeen;

        /** Reports the index's size after a change, and evicts when the node is over budget. */
        void changed(PartitionIndex index) {
            long now = index.memoryBytes() + PARTITION_OVERHEAD_BYTES;
            long before = reported;
            long total = used.addAndGet(now - reported);
            reported = now;
            double factor = 0;
            if (total > limit) {
                factor = limit * 0.9 / total;
                shrink = factor;
                overrunsSeen = overruns.incrementAndGet();
            } else if (overruns.get() != overrunsSeen) {
                // Another partition took the node over budget since this one last looked: it shrinks too.
                overrunsSeen = overruns.get();
                factor = shrink;
            }
            if (factor > 0) {
                long target = (long) (now * factor);
                if (total > limit) {
                    // The others shrink only on their next change: this one takes back what it added over the budget
                    // now, but never what another partition added (that one evicts it itself).
                    long added = Math.max(0, now - before);
                    target = Math.min(target, now - Math.min(total - limit, added));
                }
                index.evictTo(target - PARTITION_OVERHEAD_BYTES);
                now = index.memoryBytes() + PARTITION_OVERHEAD_BYTES;
                used.addAndGet(now - reported);
                reported = now;
            }
            // Also what the index evicted on its own, to make room in a full tree.
            long n = index.evictedBlocks();
            evicted.add(n - evictedBefore);
            evictedBefore = n;
        }

        /** The partition is gone: its index no longer counts. */
        void closed() {
            used.addAndGet(-reported);
            reported = 0;
        }
    }
}
