package dev.kvindexer.metrics;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The gRPC port's families (docs/operations.md#metrics): calls by method and status code and their latency, the
 * workers and blocks the bridge reported, and the prefix queries in flight against their limit. Recorded from every
 * event loop; methods are the contract's six. Rendered only while a gRPC port runs.
 */
public final class GrpcMetrics {
    static final String REQUESTS = "kvindexer_grpc_requests_total";
    static final String DURATION = "kvindexer_grpc_request_duration_seconds";
    private static final double[] BOUNDS = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 1};
    private static final String[] LE = {
        "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "1"
    };

    /** What the service holds, read at each scrape. */
    public interface Figures {
        int workers();

        int readyWorkers();

        int blocks();

        int prefixInflight();

        int prefixMaxInflight();

        /** Bridge changes between members of a cluster, by {@link #PEER_OUTCOMES outcome}. */
        long peerChanges(String outcome);

        /** Whether this member began from another member's bridge state. */
        boolean stateCopied();
    }

    /** A member that did not apply a change sent from here (it refused it, or did not answer in time). */
    public static final String SENT_MISSED = "sent_missed";
    /** Another member's change, applied here. */
    public static final String RECEIVED_APPLIED = "received_applied";
    /** Another member's change, refused here (malformed, past a limit, a sequence gap, too many held). */
    public static final String RECEIVED_REFUSED = "received_refused";

    static final String[] PEER_OUTCOMES = {SENT_MISSED, RECEIVED_APPLIED, RECEIVED_REFUSED};
    static final String PEER_CHANGES = "kvindexer_grpc_peer_changes_total";

    private final ConcurrentHashMap<String, Method> methods = new ConcurrentHashMap<>();
    private volatile Figures figures;

    private static final class Method {
        final Histogram seconds = new Histogram(BOUNDS, LE);
        final ConcurrentHashMap<String, LongAdder> byCode = new ConcurrentHashMap<>();
    }

    /** One answered call; {@code code} is the gRPC status name ({@code OK}, {@code INVALID_ARGUMENT}, ...). */
    public void record(String method, String code, long nanos) {
        Method m = methods.computeIfAbsent(method, k -> new Method());
        m.seconds.observe(nanos / 1e9);
        m.byCode.computeIfAbsent(code, k -> new LongAdder()).increment();
    }

    /** The port is up: its state is scraped from now on. */
    public void watch(Figures service) {
        figures = service;
    }

    public void render(PrometheusText out) {
        Figures f = figures;
        if (f == null) {
            return;
        }
        Map<String, Method> sorted = new TreeMap<>(methods);
        out.family(REQUESTS, "counter", "gRPC calls of SGLang's KVIndexer service, by method and status code");
        sorted.forEach((name, m) -> new TreeMap<>(m.byCode)
                .forEach((code, n) -> out.sample(REQUESTS, n.sum(), "method", name, "code", code)));
        out.family(DURATION, "histogram", "gRPC call latency, by method");
        sorted.forEach((name, m) -> m.seconds.render(out, DURATION, "method", name));
        out.family("kvindexer_grpc_workers", "gauge", "Workers the KV indexer bridge reported, by readiness");
        out.sample("kvindexer_grpc_workers", f.readyWorkers(), "state", "ready");
        out.sample("kvindexer_grpc_workers", f.workers() - f.readyWorkers(), "state", "not_ready");
        out.family("kvindexer_grpc_blocks", "gauge", "Blocks the KV indexer bridge reported, held by some worker")
                .sample("kvindexer_grpc_blocks", f.blocks());
        out.family("kvindexer_grpc_prefix_inflight", "gauge", "MatchExternalKvPrefix calls being answered")
                .sample("kvindexer_grpc_prefix_inflight", f.prefixInflight());
        out.family(
                        "kvindexer_grpc_prefix_max_inflight",
                        "gauge",
                        "--grpc-prefix-max-inflight: past it a prefix call is refused with RESOURCE_EXHAUSTED")
                .sample("kvindexer_grpc_prefix_max_inflight", f.prefixMaxInflight());
        out.family(
                PEER_CHANGES,
                "counter",
                "The bridge's changes between the members of a cluster: sent_missed (a member did not apply one sent "
                        + "from here), received_applied, received_refused");
        for (String outcome : PEER_OUTCOMES) {
            out.sample(PEER_CHANGES, f.peerChanges(outcome), "outcome", outcome);
        }
        out.family(
                        "kvindexer_grpc_state_copied",
                        "gauge",
                        "1 when this member began from another member's bridge state, 0 when it began from none")
                .sample("kvindexer_grpc_state_copied", f.stateCopied() ? 1 : 0);
    }
}
