package dev.kvindexer.metrics;

import java.util.Map;
import java.util.TreeMap;

/** HTTP requests a service answered, by route and status, as {@code <prefix>requests_total} and {@code _errors_total}. */
public final class RouteAnswers {
    private final Map<String, Map<Integer, long[]>> answered = new TreeMap<>();

    public void answered(String route, int status) {
        answered.computeIfAbsent(route, r -> new TreeMap<>()).computeIfAbsent(status, s -> new long[1])[0]++;
    }

    public void render(PrometheusText out, String prefix) {
        out.family(prefix + "requests_total", "counter", "HTTP requests answered, by route and status.");
        answered.forEach((route, byStatus) -> byStatus.forEach((status, n) ->
                out.sample(prefix + "requests_total", n[0], "route", route, "status", String.valueOf(status))));
        out.family(
                prefix + "errors_total",
                "counter",
                "HTTP requests answered with a 4xx or 5xx status, by route and status.");
        answered.forEach((route, byStatus) -> byStatus.forEach((status, n) -> {
            if (status >= 400) {
                out.sample(prefix + "errors_total", n[0], "route", route, "status", String.valueOf(status));
            }
        }));
    }
}
