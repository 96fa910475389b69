package dev.kvindexer.selectservice.replication;

import io.vertx.core.Future;

/**
 * A reservation change made on this replica, applied here and carried to the cluster's shared record before the
 * client hears of it: {@link ClusterLoad} in a cluster, {@link LocalReservations} for a service on its own. A
 * refusal is thrown before anything changes, or fails the future.
 */
public sealed interface SharedReservations permits ClusterLoad, LocalReservations {
    /** A booking made here (already held locally) claims its id; a clash fails with a 409 and undoes it. */
    Future<Void> booked(String id);

    Future<Void> prefillComplete(String id);

    /** One more output block; NaN for no decay fraction. */
    Future<Void> outputBlock(String id, double decayFraction);

    Future<Void> free(String id);

    void stop();
}
