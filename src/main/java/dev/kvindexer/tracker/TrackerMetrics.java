package dev.kvindexer.tracker;

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

    String render(int activeRequests, int trackedWorkers) {
        StringBuilder out = new StringBuilder(1024);
        header(out, "requests_total", "counter", "HTTP requests answered, by route and status.");
        answered.forEach((route, byStatus) -> byStatus.forEach((status, n) -> sample(out, "requests_total", route, status, n[0])));
        header(out, "errors_total", "counter", "HTTP requests answered with a 4xx or 5xx status, by route and status.");
        answered.forEach((route, byStatus) -> byStatus.forEach((status, n) -> {
            if (status >= 400) {
                sample(out, "errors_total", route, status, n[0]);
            }
        }));
        header(out, "expired_requests_total", "counter", "Active requests dropped by the stale-request cleanup.");
        out.append(PREFIX).append("expired_requests_total ").append(expired).append('\n');
        header(out, "active_requests", "gauge", "Requests added and not yet freed or expired.");
        out.append(PREFIX).append("active_requests ").append(activeRequests).append('\n');
        header(out, "tracked_workers", "gauge", "Registered workers over all trackers.");
        out.append(PREFIX).append("tracked_workers ").append(trackedWorkers).append('\n');
        return out.toString();
    }

    private static void header(StringBuilder out, String name, String type, String help) {
        out.append("# HELP ").append(PREFIX).append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(PREFIX).append(name).append(' ').append(type).append('\n');
    }

    private static void sample(StringBuilder out, String name, String route, int status, long n) {
        out.append(PREFIX).append(name).append("{route=\"").append(route).append("\",status=\"").append(status)
                .append("\"} ").append(n).append('\n');
    }
}
