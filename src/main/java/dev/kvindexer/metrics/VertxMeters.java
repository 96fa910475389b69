package dev.kvindexer.metrics;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.util.UUID;

/**
 * The Micrometer side of a service's /metrics: JVM, process and Vert.x meters of one Vert.x instance, in a
 * Prometheus registry of its own (so in-JVM test nodes never mix their figures).
 */
public final class VertxMeters {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    /**
     * Sets up {@code builder} to report into this registry. Event-bus meters stay off: every ZMQ batch is an
     * event-bus message, and our own families already count batches and events without a meter lookup per message.
     * HTTP server meters stay off too: our own per-route families count requests and their latency, and Vert.x's
     * kept about 100 MB of each young collection's objects alive under steady queries, which made every young pause
     * copy them (BENCHMARKS.md, the C++ Conductor's p99).
     */
    public VertxBuilder instrument(VertxBuilder builder, VertxOptions options) {
        options.setMetricsOptions(new MicrometerMetricsOptions()
                .setEnabled(true)
                .setJvmMetricsEnabled(true)
                // Vert.x keeps backends in a static map by this name: one per instance, or test nodes share one.
                .setRegistryName("kvindexer-" + UUID.randomUUID())
                .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true))
                .addDisabledMetricsCategory(MetricsDomain.EVENT_BUS)
                .addDisabledMetricsCategory(MetricsDomain.HTTP_SERVER));
        return builder.with(options).withMetrics(new MicrometerMetricsFactory(registry));
    }

    /** The registry's families in the Prometheus text format 0.0.4. */
    public String scrape() {
        return registry.scrape();
    }
}
