package dev.kvindexer.http;

import dev.kvindexer.net.NetworkBudget;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Lets whole-index dumps hold their snapshots only within the node's network budget: one dump takes its snapshots at
 * a time, and its snapshots' bytes are reserved before it answers, released as each partition is written out. A dump
 * the budget cannot hold is answered 503 with Retry-After rather than allowed to end the node.
 */
public final class DumpAdmission {
    /** Seconds a refused client is asked to wait. */
    static final int RETRY_AFTER_SECONDS = 5;

    private final NetworkBudget budget;
    private final AtomicBoolean snapshotting = new AtomicBoolean();

    public DumpAdmission(NetworkBudget budget) {
        this.budget = budget;
    }

    /** For a node without a budget of its own (tests, tools). */
    public static DumpAdmission unbounded() {
        return new DumpAdmission(NetworkBudget.unbounded());
    }

    /** Whether this dump may take its snapshots now: no other is taking its own. */
    boolean startSnapshots() {
        return snapshotting.compareAndSet(false, true);
    }

    void snapshotsTaken() {
        snapshotting.set(false);
    }

    /** Reserves the snapshots' bytes; false, counted, when the budget cannot hold them. */
    boolean reserve(long bytes) {
        if (budget.tryReserve(bytes, 0)) {
            return true;
        }
        budget.refused(NetworkBudget.HTTP);
        return false;
    }

    void release(long bytes) {
        budget.release(bytes);
    }

    long limit() {
        return budget.limit();
    }
}
