package dev.kvindexer.selectservice.replication;

import dev.kvindexer.select.Bookings;
import io.vertx.core.Future;

/** A service on its own: every reservation change is this replica's alone, done when applied here. */
public record LocalReservations(Bookings bookings) implements SharedReservations {
    @Override
    public Future<Void> booked(String id) {
        return Future.succeededFuture();
    }

    @Override
    public Future<Void> prefillComplete(String id) {
        bookings.prefillComplete(id);
        return Future.succeededFuture();
    }

    @Override
    public Future<Void> outputBlock(String id, double decayFraction) {
        bookings.outputBlock(id, decayFraction);
        return Future.succeededFuture();
    }

    @Override
    public Future<Void> free(String id) {
        bookings.free(id);
        return Future.succeededFuture();
    }

    @Override
    public void stop() {}
}
