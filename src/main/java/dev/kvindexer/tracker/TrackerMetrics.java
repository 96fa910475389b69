package dev.kvindexer.tracker;

import dev.kvindexer.metrics.PrometheusText;
import dev.kvindexer.metrics.RouteAnswers;

/**
 * The slot tracker's Prometheus families (Dynamo's tracker has none; these are ours): requests answered and errors by
 * route and status, requests expired, and the active requests and tracked workers at scrape time. Single-threaded:
 * the tracker's verticle owns it.
 */
final class TrackerMetrics {
    static final String PREFIX = "kvindexer_slot_tracker_";

    private final RouteAnswers answered = new RouteAnswers();
    private long expired;

    void answered(String route, int status) {
        answered.answered(route, status);
    }

    void expired(int requests) {
        expired += requests;
    }

    /** Our families, then {@code micrometer} (the JVM and Vert.x meters' text, possibly empty). */
    String render(int activeRequests, int trackedWorkers, String micrometer) {
        PrometheusText out = new PrometheusText();
        answered.render(out, PREFIX);
        out.family(
                        PREFIX + "expired_requests_total",
                        "counter",
                        "Active requests dropped by the stale-request cleanup.")
                .sample(PREFIX + "expired_requests_total", expired);
        out.family(PREFIX + "active_requests", "gauge", "Requests added and not yet freed or expired.")
                .sample(PREFIX + "active_requests", activeRequests);
        out.family(PREFIX + "tracked_workers", "gauge", "Registered workers over all trackers.")
                .sample(PREFIX + "tracked_workers", trackedWorkers);
        return out.raw(micrometer).toString();
    }
}
