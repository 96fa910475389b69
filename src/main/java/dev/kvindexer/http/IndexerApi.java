package dev.kvindexer.http;

import dev.kvindexer.metrics.HttpRequestMetrics;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.web.AccessLog;
import dev.kvindexer.web.Readiness;
import io.vertx.core.Future;
import java.util.function.Supplier;

/**
 * What the indexer's HTTP verticle serves, as the node assembled it: the route groups, each holding the ports it
 * answers from, the pages about the node, and what the edge counts. Every member is thread-safe: one instance serves
 * every event loop's verticle.
 *
 * @param dynamo         the Dynamo API's handlers
 * @param mooncake       the Mooncake JSON API's handlers on the routes it shares with Dynamo
 * @param events         {@code POST /events}, standardized events
 * @param msgpack        the API that answers msgpack requests on the shared routes (the C++ Conductor's)
 * @param readiness      what /ready reports
 * @param metricsPage    renders /metrics
 * @param overview       renders /overview, the dashboard's JSON view of the node
 * @param requestMetrics per-route request counts and latencies
 * @param accessLog      the access log, or null when none is configured
 * @param network        the network memory budget request bodies are reserved from
 * @param testEndpoints  whether the test-only routes are served
 */
public record IndexerApi(
        DynamoRoutes dynamo,
        MooncakeJsonRoutes mooncake,
        StandardEventsRoute events,
        MsgpackApi msgpack,
        Readiness readiness,
        Supplier<Future<String>> metricsPage,
        Supplier<Future<String>> overview,
        HttpRequestMetrics requestMetrics,
        AccessLog accessLog,
        NetworkBudget network,
        boolean testEndpoints) {}
