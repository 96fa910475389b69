package dev.kvindexer.metrics;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.tracing.TracingOptions;
import io.vertx.tracing.opentelemetry.OpenTelemetryTracingFactory;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tracing's one job: an OpenTelemetry SDK configured from the standard {@code OTEL_*} settings when they ask for
 * traces, handed to Vert.x (which then makes a span per HTTP and gRPC request and per event-bus send, and carries W3C
 * {@code traceparent} across the cluster), and shut down with its spans flushed (docs/operations.md#tracing).
 *
 * <p>Off unless {@code otel.traces.exporter} names an exporter other than {@code none}, or an OTLP endpoint ({@code
 * otel.exporter.otlp.endpoint}, {@code otel.exporter.otlp.traces.endpoint}) is set; {@code otel.sdk.disabled=true}
 * always turns it off. The SDK reads these as system properties or environment variables ({@code
 * OTEL_TRACES_EXPORTER}...); {@code defaults} (tests) come under both. Only traces are exported (metrics stay on
 * Prometheus), over OTLP/HTTP with protobuf: the jar holds the JDK's HTTP sender and no gRPC one (asking for grpc
 * fails at startup).
 */
public final class Tracing implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Tracing.class);

    /** No SDK: Vert.x gets no tracer and pays nothing. */
    public static final Tracing OFF = new Tracing(null, Spans.OFF);

    /** The setting that names how many ingest batches make one traced batch ({@code KVINDEXER_TRACE_INGEST_EVERY}). */
    static final String INGEST_EVERY = "kvindexer.trace.ingest.every";

    /** One ingest batch in this many is traced unless the setting says otherwise; 0 traces none. */
    static final long DEFAULT_INGEST_EVERY = 1000;

    /** The longest {@link #close()} waits for a collector, and the node's close too. */
    public static final Duration SHUTDOWN = Duration.ofSeconds(3);

    private final OpenTelemetrySdk sdk;
    private final Spans spans;

    private Tracing(OpenTelemetrySdk sdk, Spans spans) {
        this.sdk = sdk;
        this.spans = spans;
    }

    /** From the environment and system properties alone (the commands). */
    public static Tracing fromEnvironment() {
        return configure(Map.of());
    }

    /** From the environment and system properties, with {@code defaults} under both (tests name theirs here). */
    public static Tracing configure(Map<String, String> defaults) {
        if (!mayAskForTraces(defaults)) {
            return OFF; // the SDK's configuration (a few hundred classes) is read only when a setting could turn it on
        }
        AtomicBoolean wanted = new AtomicBoolean();
        AtomicLong ingestEvery = new AtomicLong(DEFAULT_INGEST_EVERY);
        AutoConfiguredOpenTelemetrySdk configured;
        try {
            configured = AutoConfiguredOpenTelemetrySdk.builder()
                    // this class shuts it down, within the node's close budget, not a hook of its own at exit
                    .disableShutdownHook()
                    .addPropertiesSupplier(() -> defaults)
                    .addPropertiesCustomizer(config -> {
                        wanted.set(wanted(config));
                        if (wanted.get()) {
                            ingestEvery.set(config.getLong(INGEST_EVERY, DEFAULT_INGEST_EVERY));
                        }
                        return overrides(config, wanted.get());
                    })
                    .build();
        } catch (ConfigurationException e) {
            // grpc as the protocol lands here: no sender for it in the jar
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IllegalArgumentException("OTEL_* settings: " + cause.getMessage(), e);
        }
        if (!wanted.get()) {
            configured.getOpenTelemetrySdk().close();
            return OFF;
        }
        if (ingestEvery.get() < 0) {
            configured.getOpenTelemetrySdk().close();
            throw new IllegalArgumentException(
                    "OTEL_* settings: " + INGEST_EVERY + " must be 0 (no ingest batch traced) or more");
        }
        LOG.info("tracing on: spans exported over OTLP/HTTP, one ingest batch in {} traced", ingestEvery.get());
        OpenTelemetrySdk sdk = configured.getOpenTelemetrySdk();
        return new Tracing(sdk, new Spans(sdk.getTracer("dev.kvindexer"), ingestEvery.get()));
    }

    /** Settings that can turn tracing on, in the SDK's normalized form; without any of them it is off. */
    private static final Set<String> TURN_ON =
            Set.of("otel.traces.exporter", "otel.exporter.otlp.endpoint", "otel.exporter.otlp.traces.endpoint");

    /**
     * Whether any setting that can turn tracing on is present, named as the SDK reads names: system properties and
     * {@code defaults} lower-cased with '-' as '.', environment variables lower-cased with '_' as '.'.
     */
    static boolean mayAskForTraces(Map<String, String> defaults) {
        return namesOne(defaults.keySet(), '-')
                || namesOne(System.getProperties().stringPropertyNames(), '-')
                || namesOne(System.getenv().keySet(), '_');
    }

    private static boolean namesOne(Collection<String> names, char separator) {
        for (String name : names) {
            if (TURN_ON.contains(name.toLowerCase(Locale.ROOT).replace(separator, '.'))) {
                return true;
            }
        }
        return false;
    }

    /** Whether the settings ask for traces. */
    static boolean wanted(ConfigProperties config) {
        if (config.getBoolean("otel.sdk.disabled", false)) {
            return false;
        }
        String exporter = config.getString("otel.traces.exporter");
        if (exporter != null && !exporter.isBlank()) {
            return !exporter.trim().equals("none");
        }
        return config.getString("otel.exporter.otlp.endpoint") != null
                || config.getString("otel.exporter.otlp.traces.endpoint") != null;
    }

    /** What this service decides over the SDK's defaults: traces only, over HTTP; or the SDK off entirely. */
    private static Map<String, String> overrides(ConfigProperties config, boolean wanted) {
        Map<String, String> out = new HashMap<>();
        if (!wanted) {
            out.put("otel.sdk.disabled", "true");
            return out;
        }
        if (config.getString("otel.metrics.exporter") == null) {
            out.put("otel.metrics.exporter", "none");
        }
        if (config.getString("otel.logs.exporter") == null) {
            out.put("otel.logs.exporter", "none");
        }
        if (config.getString("otel.exporter.otlp.protocol") == null
                && config.getString("otel.exporter.otlp.traces.protocol") == null) {
            out.put("otel.exporter.otlp.traces.protocol", "http/protobuf");
        }
        return out;
    }

    public boolean on() {
        return sdk != null;
    }

    /** kvindexer's own spans over this SDK; {@link Spans#OFF} when tracing is off. */
    public Spans spans() {
        return spans;
    }

    /** {@code builder} with Vert.x's tracer over this SDK, when tracing is on; as it was otherwise. */
    public VertxBuilder instrument(VertxBuilder builder, VertxOptions options) {
        if (sdk == null) {
            return builder;
        }
        options.setTracingOptions(new TracingOptions());
        return builder.with(options).withTracer(new OpenTelemetryTracingFactory(sdk));
    }

    /** Exports the spans still buffered and stops the SDK; waits at most a few seconds for the collector. */
    @Override
    public void close() {
        close(SHUTDOWN);
    }

    /**
     * As {@link #close()}, waiting at most {@code wait} for the collector (a collector that is down makes the exporter
     * retry for longer than a stop may take).
     */
    public void close(Duration wait) {
        if (sdk == null) {
            return;
        }
        CompletableResultCode done = sdk.shutdown().join(wait.toMillis(), TimeUnit.MILLISECONDS);
        if (!done.isSuccess()) {
            LOG.warn("tracing: spans may be lost, the SDK did not shut down within {}", wait);
        }
    }
}
