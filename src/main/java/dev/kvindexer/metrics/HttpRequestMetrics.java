package dev.kvindexer.metrics;

import java.math.BigDecimal;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Dynamo's HTTP families (docs/operations.md#metrics): {@code dynamo_kvindexer_request_duration_seconds} with the reference's buckets
 * (0.1 ms doubling twenty times), {@code _requests_total} by endpoint and method, {@code _errors_total} by endpoint and
 * status class. Recorded from every event loop; endpoints are route paths (a bounded set) or {@link #UNKNOWN}.
 */
public final class HttpRequestMetrics {
    /** The endpoint label of a request that matched no route, as in the reference. */
    public static final String UNKNOWN = "unknown";

    static final String DURATION = "dynamo_kvindexer_request_duration_seconds";
    static final String REQUESTS = "dynamo_kvindexer_requests_total";
    static final String ERRORS = "dynamo_kvindexer_errors_total";
    private static final int BUCKETS = 20;
    private static final double[] BOUNDS = new double[BUCKETS];
    private static final String[] LE = new String[BUCKETS];

    static {
        for (int i = 0; i < BUCKETS; i++) {
            BigDecimal bound = new BigDecimal("0.0001").multiply(BigDecimal.valueOf(1L << i));
            BOUNDS[i] = bound.doubleValue();
            LE[i] = bound.stripTrailingZeros().toPlainString();
        }
    }

    private final ConcurrentHashMap<String, Endpoint> endpoints = new ConcurrentHashMap<>();

    private static final class Endpoint {
        final Histogram seconds = new Histogram(BOUNDS, LE);
        final ConcurrentHashMap<String, LongAdder> byMethod = new ConcurrentHashMap<>();
        final LongAdder clientErrors = new LongAdder();
        final LongAdder serverErrors = new LongAdder();
    }

    /** One answered request. */
    public void record(String endpoint, String method, int status, long nanos) {
        Endpoint e = endpoints.computeIfAbsent(endpoint, k -> new Endpoint());
        e.seconds.observe(nanos / 1e9);
        e.byMethod.computeIfAbsent(method, k -> new LongAdder()).increment();
        if (status >= 500) {
            e.serverErrors.increment();
        } else if (status >= 400) {
            e.clientErrors.increment();
        }
    }

    /** Requests answered on one endpoint so far and the seconds they took together. */
    public record Totals(long requests, double seconds) {}

    /** Every endpoint's totals, by endpoint. */
    public Map<String, Totals> totals() {
        Map<String, Totals> out = new TreeMap<>();
        endpoints.forEach((name, e) -> out.put(name, new Totals(e.seconds.count(), e.seconds.sum())));
        return out;
    }

    public void render(PrometheusText out) {
        Map<String, Endpoint> sorted = new TreeMap<>(endpoints);
        out.family(DURATION, "histogram", "HTTP request latency");
        sorted.forEach((name, e) -> e.seconds.render(out, DURATION, "endpoint", name));
        out.family(REQUESTS, "counter", "Total HTTP requests");
        sorted.forEach((name, e) -> new TreeMap<>(e.byMethod)
                .forEach((method, n) -> out.sample(REQUESTS, n.sum(), "endpoint", name, "method", method)));
        out.family(ERRORS, "counter", "HTTP error responses (4xx/5xx)");
        sorted.forEach((name, e) -> {
            if (e.clientErrors.sum() > 0) {
                out.sample(ERRORS, e.clientErrors.sum(), "endpoint", name, "status_class", "4xx");
            }
            if (e.serverErrors.sum() > 0) {
                out.sample(ERRORS, e.serverErrors.sum(), "endpoint", name, "status_class", "5xx");
            }
        });
    }
}
