package dev.kvindexer.http;

import dev.kvindexer.cluster.PeerDirectory;
import dev.kvindexer.metrics.HttpRequestMetrics;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.registry.LocalRegistrar;
import dev.kvindexer.registry.Registrar;
import dev.kvindexer.registry.Registry;
import dev.kvindexer.web.AccessLog;
import dev.kvindexer.web.Readiness;
import io.vertx.core.Future;
import java.util.function.Supplier;

/**
 * What the indexer's HTTP routes work with; all members are thread-safe.
 *
 * @param registrar      what /register and /unregister go through: this node, or the whole cluster
 * @param registrations  this node's own registrations (test pause/resume)
 * @param registry       registered workers and the handles of their partitions
 * @param watermarks     every stream's watermark and whether the index holds it exactly
 * @param peers          /register_peer, /unregister_peer and /peers
 * @param msgpackApi     the API that answers msgpack requests on the shared routes (the C++ Conductor's)
 * @param readiness      what /ready reports
 * @param metricsPage    renders /metrics
 * @param requestMetrics per-route request counts and latencies
 * @param queries        the index as the query routes ask it, each query counted in the routing-quality metrics
 * @param overview       renders /overview, the dashboard's JSON view of the node
 * @param accessLog      the access log, or null when none is configured
 * @param testEndpoints  whether the test-only routes are served
 * @param tenantFallback the Dynamo API takes tenant_id as the group when routing_group is absent, and echoes it
 */
public record NodeServices(
        Registrar registrar,
        LocalRegistrar registrations,
        Registry registry,
        Watermarks watermarks,
        PeerDirectory peers,
        MsgpackApi msgpackApi,
        Readiness readiness,
        Supplier<Future<String>> metricsPage,
        HttpRequestMetrics requestMetrics,
        IndexQueries queries,
        Supplier<Future<String>> overview,
        AccessLog accessLog,
        boolean testEndpoints,
        boolean tenantFallback,
        NetworkBudget network,
        DumpAdmission dumps) {}
