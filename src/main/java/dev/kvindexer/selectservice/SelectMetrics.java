package dev.kvindexer.selectservice;

import dev.kvindexer.metrics.PrometheusText;
import dev.kvindexer.metrics.RouteAnswers;

/**
 * The selection service's Prometheus families (Dynamo's service has none; these are ours): requests by route and
 * status, and at scrape time the schedulable workers, active reservations, queued selections and what replica
 * peers sent. Single-threaded: the service's verticle owns it.
 */
final class SelectMetrics {
    static final String PREFIX = "kvindexer_select_";

    final RouteAnswers answered = new RouteAnswers();

    /** Our families, then {@code micrometer} (the JVM and Vert.x meters' text, possibly empty). */
    String render(
            int schedulableWorkers,
            int reservations,
            long bookedBlocks,
            long refusedRemote,
            int queued,
            long[] replicaCounts,
            long sessionBindings,
            PredictedIndex.Counts predicted,
            String micrometer) {
        PrometheusText out = new PrometheusText();
        answered.render(out, PREFIX);
        bookings(out, schedulableWorkers, reservations, bookedBlocks, refusedRemote, queued);
        replicaSync(out, replicaCounts);
        out.family(
                        PREFIX + "session_bindings",
                        "gauge",
                        "Session bindings held, idle ones not yet swept included (0 without session affinity).")
                .sample(PREFIX + "session_bindings", sessionBindings);
        predictions(out, predicted);
        return out.raw(micrometer).toString();
    }

    /** Schedulable workers, the reservations booked on them and those refused from replicas, and selections waiting. */
    private static void bookings(
            PrometheusText out,
            int schedulableWorkers,
            int reservations,
            long bookedBlocks,
            long refusedRemote,
            int queued) {
        out.family(PREFIX + "schedulable_workers", "gauge", "Workers in the catalog that take part in selection.")
                .sample(PREFIX + "schedulable_workers", schedulableWorkers);
        out.family(
                        PREFIX + "active_reservations",
                        "gauge",
                        "Reservations booked and not yet freed or expired, " + "mirrored ones included.")
                .sample(PREFIX + "active_reservations", reservations);
        out.family(
                        PREFIX + "booked_blocks",
                        "gauge",
                        "Blocks the active reservations hold together, against " + "--max-booked-blocks.")
                .sample(PREFIX + "booked_blocks", bookedBlocks);
        out.family(
                        PREFIX + "replica_bookings_refused_total",
                        "counter",
                        "Bookings from replicas dropped because "
                                + "they were over --max-booking-blocks or --max-booked-blocks.")
                .sample(PREFIX + "replica_bookings_refused_total", refusedRemote);
        out.family(PREFIX + "queued_selections", "gauge", "Selections waiting for load to drop.")
                .sample(PREFIX + "queued_selections", queued);
    }

    /** What replica-sync peers sent: the four counts of {@link SelectServiceVerticle#replicaCounts()}. */
    private static void replicaSync(PrometheusText out, long[] replicaCounts) {
        out.family(PREFIX + "replica_messages_total", "counter", "Messages received from replica-sync peers.")
                .sample(PREFIX + "replica_messages_total", replicaCounts[0]);
        out.family(PREFIX + "replica_malformed_total", "counter", "Replica-sync messages dropped as malformed.")
                .sample(PREFIX + "replica_malformed_total", replicaCounts[1]);
        out.family(
                        PREFIX + "replica_overflow_total",
                        "counter",
                        "Replica-sync messages dropped because too many " + "were waiting to be applied.")
                .sample(PREFIX + "replica_overflow_total", replicaCounts[2]);
        out.family(
                        PREFIX + "replica_bindings_refused_total",
                        "counter",
                        "Session bindings from replica-sync peers dropped: a session id over 256 bytes, or a full table.")
                .sample(PREFIX + "replica_bindings_refused_total", replicaCounts[3]);
    }

    private static void predictions(PrometheusText out, PredictedIndex.Counts predicted) {
        out.family(
                        PREFIX + "predicted_entries",
                        "gauge",
                        "Predicted blocks held, each counted once per live booking that predicts it "
                                + "(DYN_ROUTER_PREDICTED_TTL_SECS).")
                .sample(PREFIX + "predicted_entries", predicted.entries());
        out.family(
                        PREFIX + "predicted_blocks_total",
                        "counter",
                        "Blocks of ended predictions: confirmed when the rank's engine reported holding them by the "
                                + "prediction's end, unconfirmed when it did not.")
                .sample(PREFIX + "predicted_blocks_total", predicted.confirmedBlocks(), "outcome", "confirmed")
                .sample(PREFIX + "predicted_blocks_total", predicted.unconfirmedBlocks(), "outcome", "unconfirmed");
        out.family(
                        PREFIX + "predicted_evicted_total",
                        "counter",
                        "Predictions ended before their TTL because the predicted entries reached --max-booked-blocks.")
                .sample(PREFIX + "predicted_evicted_total", predicted.evicted());
    }
}
