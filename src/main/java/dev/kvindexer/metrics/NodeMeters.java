package dev.kvindexer.metrics;

/**
 * What a node measures beyond its event counters: HTTP requests, what queries matched, its Vert.x and JVM meters,
 * startup recovery, its cluster's repairs and refused values, and its own trace spans.
 */
public final class NodeMeters {
    private final HttpRequestMetrics http = new HttpRequestMetrics();
    private final GrpcMetrics grpc = new GrpcMetrics();
    private final ClusterCounters cluster = new ClusterCounters();
    private final QueryQuality queryQuality = new QueryQuality();
    private final VertxMeters vertx;
    private final Spans spans;
    private volatile double recoverySeconds;
    private volatile long recoveredEvents;
    private volatile boolean recoveryExact;

    /**
     * @param vertx the node's Micrometer meters, or null when its Vert.x is not instrumented
     * @param spans the node's own spans ({@link Spans#OFF} without tracing)
     */
    public NodeMeters(VertxMeters vertx, Spans spans) {
        this.vertx = vertx;
        this.spans = spans;
    }

    public Spans spans() {
        return spans;
    }

    public HttpRequestMetrics http() {
        return http;
    }

    public GrpcMetrics grpc() {
        return grpc;
    }

    public QueryQuality queryQuality() {
        return queryQuality;
    }

    public ClusterCounters cluster() {
        return cluster;
    }

    /** The Micrometer registry's text, or nothing. */
    public String micrometerScrape() {
        return vertx == null ? "" : vertx.scrape();
    }

    /** @param exact every partition loaded was an exact snapshot, with its streams' watermarks */
    public void recovered(long millis, long events, boolean exact) {
        recoverySeconds = millis / 1000.0;
        recoveredEvents = events;
        recoveryExact = exact;
    }

    public double recoverySeconds() {
        return recoverySeconds;
    }

    public long recoveredEvents() {
        return recoveredEvents;
    }

    public boolean recoveryExact() {
        return recoveryExact;
    }
}
