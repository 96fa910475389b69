package dev.kvindexer.tracker;

import dev.kvindexer.metrics.PrometheusText;
import java.util.Map;
import java.util.TreeMap;

/**
 * The slot tracker's Prometheus families (Dynamo's tracker has none; these are ours): requests answered and errors by
 * route and status, requests expired, and the active requests and tracked workers at scrape time. Single-threaded:
 * the tracker's verticle owns it.
 */
final class TrackerMetrics {
    static final String PREFIX = "kvindexer_slot_tracker_";

    private final Map<String, Map<Integer, long[]>> answered = new TreeMap<>();
    private long expired;

    void answered(String route, int status) {
        answered.computeIfAbsent(route, r -> new TreeMap<>()).computeIfAbsent(status, s -> new long[1])[0]++;
    }

    void expired(int requests) {
        expired += requests;
    }

    /** Our families, then {@code micrometer} (the JVM and Vert.x meters' text, possibly empty). */
    String render(int activeRequests, int trackedWorkers, String micrometer) {
        PrometheusText out = new PrometheusText();
        out.family(PREFIX + "requests_total", "counter", "HTTP requests answered, by route and status.");
        answered.forEach((route, byStatus) -> byStatus.forEach((status, n) ->
                out.sample(PREFIX + "requests_total", n[0], "route", route, "status", String.valueOf(status))));
        out.family(PREFIX + "errors_total", "counter", "HTTP requests answered with a 4xx or 5xx status, by route and status.");
        answered.forEach((route, byStatus) -> byStatus.forEach((status, n) -> {
            if (status >= 400) {
                out.sample(PREFIX + "errors_total", n[0], "route", route, "status", String.valueOf(status));
            }
        }));
        out.family(PREFIX + "expired_requests_total", "counter", "Active requests dropped by the stale-request cleanup.")
                .sample(PREFIX + "expired_requests_total", expired);
        out.family(PREFIX + "active_requests", "gauge", "Requests added and not yet freed or expired.")
                .sample(PREFIX + "active_requests", activeRequests);
        out.family(PREFIX + "tracked_workers", "gauge", "Registered workers over all trackers.")
                .sample(PREFIX + "tracked_workers", trackedWorkers);
        return out.raw(micrometer).toString();
    }
}
