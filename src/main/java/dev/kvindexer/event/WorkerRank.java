package dev.kvindexer.event;

import java.util.Comparator;

/**
 * One engine rank: a worker (instance id, unsigned) and one of its data-parallel ranks. Ordered as the APIs list
 * them, worker id unsigned first; written {@code instance_id:dp_rank}, both unsigned decimal.
 */
public record WorkerRank(long workerId, int dpRank) implements Comparable<WorkerRank> {
    private static final Comparator<WorkerRank> ORDER =
            Comparator.comparing(WorkerRank::workerId, Long::compareUnsigned).thenComparingInt(WorkerRank::dpRank);

    @Override
    public int compareTo(WorkerRank other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return Long.toUnsignedString(workerId) + ":" + dpRank;
    }
}
