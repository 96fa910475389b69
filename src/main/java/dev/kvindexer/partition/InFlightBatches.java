package dev.kvindexer.partition;

import dev.kvindexer.net.NetworkBudget;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Live batches ingest has sent and partitions have not taken yet: bounded in count here, and in bytes by the network
 * budget, whose reservation for a batch's message travels with the batch and is given back when a partition takes
 * it. Ingest reads no further than partitions keep up.
 */
public final class InFlightBatches {
    private final int limit;
    private final NetworkBudget budget;
    private final AtomicInteger inFlight = new AtomicInteger();

    public InFlightBatches(int limit, NetworkBudget budget) {
        this.limit = limit;
        this.budget = budget;
    }

    public InFlightBatches(int limit) {
        this(limit, NetworkBudget.unbounded());
    }

    public boolean hasRoom() {
        return inFlight.get() < limit;
    }

    /** A batch was sent, holding {@code heldBytes} of the budget until it is taken. */
    public void sent() {
        inFlight.incrementAndGet();
    }

    /** Called by the partition when it takes a batch off the bus: its bytes go back to the budget. */
    public void taken(long heldBytes) {
        inFlight.decrementAndGet();
        budget.release(heldBytes);
    }

    public int current() {
        return inFlight.get();
    }

    public int limit() {
        return limit;
    }
}
