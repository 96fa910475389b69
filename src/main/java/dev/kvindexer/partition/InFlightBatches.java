package dev.kvindexer.partition;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the batches sent by ingest threads but not yet taken by a partition: event-bus sends from a non-Vert.x
 * thread queue without limit, so without this a flood would grow memory until the JVM dies. When the bound is
 * reached the ingest threads stop reading, and TCP pushes back to the engines.
 */
public final class InFlightBatches {
    private final int limit;
    private final AtomicInteger inFlight = new AtomicInteger();

    public InFlightBatches(int limit) {
        this.limit = limit;
    }

    public boolean hasRoom() {
        return inFlight.get() < limit;
    }

    public void sent() {
        inFlight.incrementAndGet();
    }

    /** Called by the partition when it takes a batch off the bus. */
    public void taken() {
        inFlight.decrementAndGet();
    }

    public int current() {
        return inFlight.get();
    }

    public int limit() {
        return limit;
    }
}
