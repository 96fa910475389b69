package dev.kvindexer.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.metrics.Tracing;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.client.GrpcClientResponse;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Tracing (docs/operations.md#tracing): off without OTEL settings; on, a request's W3C {@code traceparent} becomes the
 * parent of the node's server span (an HTTP request's, a gRPC call's), and a sharded query scattered to another node
 * continues the same trace there.
 */
class TracingTest {
    private static final int ENGINES = 4;
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT_ID = "00f067aa0ba902b7";

    /** A span as the receiver got it: which node sent it, and its place in its trace. */
    record Received(String service, String traceId, String spanId, String parentId, String name, Span.SpanKind kind) {}

    private final Vertx receiverVertx = Vertx.vertx();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final List<IndexerNode> standalone = new ArrayList<>();
    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();

    @AfterEach
    void stop() throws Exception {
        fixture.close();
        cluster.close();
        standalone.forEach(IndexerNode::close);
        receiverVertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void offWithoutOtelSettingsAndOnlyOverHttp() throws Exception {
        assertFalse(Tracing.configure(Map.of("otel.service.name", "idle")).on());
        assertFalse(Tracing.configure(Map.of("otel.traces.exporter", "none")).on());
        assertFalse(Tracing.configure(Map.of("otel.traces.exporter", "otlp", "otel.sdk.disabled", "true"))
                .on());
        try (Tracing endpointOnly = Tracing.configure(Map.of("otel.exporter.otlp.endpoint", "http://127.0.0.1:9"))) {
            assertTrue(endpointOnly.on());
            assertEquals(1000, endpointOnly.spans().ingestEvery(), "one ingest batch in a thousand by default");
        }
        assertEquals(0, Tracing.OFF.spans().ingestEvery());
        assertFalse(Tracing.OFF.spans().on());
        try (Tracing none = Tracing.configure(
                Map.of("otel.exporter.otlp.endpoint", "http://127.0.0.1:9", "kvindexer.trace.ingest.every", "0"))) {
            assertEquals(0, none.spans().ingestEvery());
            assertNull(none.spans().ingestBatch(1, 0, 1, 1), "no batch traced");
        }
        for (String bad : List.of("-1", "often")) {
            IllegalArgumentException refused = assertThrows(
                    IllegalArgumentException.class,
                    () -> Tracing.configure(Map.of(
                            "otel.exporter.otlp.endpoint", "http://127.0.0.1:9", "kvindexer.trace.ingest.every", bad)));
            assertTrue(refused.getMessage().contains("kvindexer.trace.ingest.every"), refused.getMessage());
        }

        IllegalArgumentException grpc = assertThrows(
                IllegalArgumentException.class,
                () -> Tracing.configure(Map.of("otel.traces.exporter", "otlp", "otel.exporter.otlp.protocol", "grpc")));
        assertTrue(grpc.getMessage().startsWith("OTEL_* settings: "), grpc.getMessage());

        IndexerNode node = IndexerNode.start(ServeConfig.local(0));
        standalone.add(node);
        assertNull(((VertxInternal) node.vertx()).tracer(), "no tracer: Vert.x pays nothing for tracing");
        HttpResponse<String> r = fixture.http(node.httpPort())
                .withHeader("traceparent", "00-" + TRACE_ID + "-" + PARENT_ID + "-01")
                .get("/health");
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test
    void aScatteredQueryContinuesTheClientsTraceOnTheOtherNode() throws Exception {
        int receiver = startReceiver();
        List<IndexerNode> nodes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Map<String, String> otel = Map.of(
                    "otel.traces.exporter",
                    "otlp",
                    "otel.exporter.otlp.traces.endpoint",
                    "http://127.0.0.1:" + receiver + "/v1/traces",
                    "otel.service.name",
                    "node-" + i,
                    "otel.bsp.schedule.delay",
                    "100");
            nodes.add(cluster.start(c -> c.withTracing(otel)
                    .withCluster(c.cluster().withReplicationFactor(1).withReconcileInterval(Duration.ofSeconds(1)))));
        }
        for (int i = 0; i < ENGINES; i++) {
            SimulatedEngine e = fixture.engine(401 + i);
            JsonObject body = RegisterClient.body(e, ClusterFixture.MODEL, "default");
            HttpResponse<String> r = fixture.http(nodes.get(0).httpPort()).post("/register", body.encode());
            assertEquals(201, r.statusCode(), r.body());
        }
        fixture.awaitSplit(nodes, ENGINES);

        int[] prompt = SyntheticPrompts.standard(29, ClusterFixture.BLOCK).next();
        JsonArray tokens = new JsonArray();
        for (int t : prompt) {
            tokens.add(t);
        }
        HttpResponse<String> r = fixture.http(nodes.get(0).httpPort())
                .withHeader("traceparent", "00-" + TRACE_ID + "-" + PARENT_ID + "-01")
                .post(
                        "/query",
                        new JsonObject()
                                .put("model_name", ClusterFixture.MODEL)
                                .put("token_ids", tokens)
                                .encode());
        assertEquals(200, r.statusCode(), r.body());

        // Each node exports a span when it ends, so node 1's match can arrive before the server span it ran under:
        // wait for the span that links the two nodes, not for any of node 1's.
        Await.until(
                "node 0's server span and a span of node 1 under one of node 0's",
                ClusterFixture.WAIT,
                () -> serverSpan() != null && childOfNode0OnNode1());
        Received server = serverSpan();
        assertNotNull(server);
        assertEquals(PARENT_ID, server.parentId(), server.toString());
        assertTrue(childOfNode0OnNode1(), "node 1's span is a child of one of node 0's: " + received);

        // Our own spans: the match under the request, the shard it asked under the match, and node 1's match of its
        // instances under that shard's span, all one trace.
        Await.until(
                "node 1's match, a descendant of node 0's shard span",
                ClusterFixture.WAIT,
                () -> named("node-1", "partition.query").stream()
                        .anyMatch(m -> names(ancestors(m)).contains("node-0 shard.query")));
        Received remoteMatch = named("node-1", "partition.query").stream()
                .filter(m -> names(ancestors(m)).contains("node-0 shard.query"))
                .findFirst()
                .orElseThrow();
        List<String> chain = names(ancestors(remoteMatch));
        assertTrue(
                chain.indexOf("node-0 shard.query") < chain.indexOf("node-0 partition.query")
                        && chain.indexOf("node-0 partition.query") < chain.size() - 1,
                "node 1's match under node 0's shard span, under node 0's match: " + chain);
        assertEquals(
                server.spanId(), ancestors(remoteMatch).get(chain.size() - 1).spanId(), chain.toString());
        assertTrue(
                named("node-0", "POST /query").contains(server),
                "the server span is named by its route: " + server.name());
    }

    /** The C++ Conductor's msgpack /query is answered ahead of the router; its server span is named all the same. */
    @Test
    void aConductorQueryIsAServerSpanNamedByItsRoute() throws Exception {
        int receiver = startReceiver();
        IndexerNode node = IndexerNode.start(ServeConfig.local(0).withTracing(exportingTo(receiver, "node-0")));
        standalone.add(node);
        java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + node.httpPort() + "/query"))
                .header("content-type", "application/msgpack")
                .header("traceparent", "00-" + TRACE_ID + "-" + PARENT_ID + "-01")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(
                        dev.kvindexer.sim.LoopbackEngines.conductorQuery("m", new int[] {1, 2, 3})))
                .build();
        HttpResponse<byte[]> r = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .build()
                .send(request, HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode());
        Await.until("node 0's server span in the client's trace", ClusterFixture.WAIT, () -> serverSpan() != null);
        assertEquals("POST /query", serverSpan().name());
    }

    @Test
    void aSampledIngestBatchIsATraceWithItsApply() throws Exception {
        int receiver = startReceiver();
        IndexerNode node = IndexerNode.start(ServeConfig.local(0)
                .withTracing(with(exportingTo(receiver, "node-0"), "kvindexer.trace.ingest.every", "1")));
        standalone.add(node);
        SimulatedEngine engine = fixture.engine(501);
        fixture.register(node.httpPort(), engine);
        ClusterFixture.awaitSubscribers(engine, 1);
        engine.submit(SyntheticPrompts.standard(31, ClusterFixture.BLOCK).next());

        Await.until(
                "a batch's span and its apply as a child",
                ClusterFixture.WAIT,
                () -> named("node-0", "partition.apply").stream()
                        .anyMatch(a -> named("node-0", "ingest.batch").stream()
                                .anyMatch(b -> b.spanId().equals(a.parentId()))));
        Received batch = named("node-0", "ingest.batch").get(0);
        assertEquals("", batch.parentId(), "a batch begins a trace of its own");
        assertEquals(Span.SpanKind.SPAN_KIND_CONSUMER, batch.kind());
    }

    @Test
    void aBookingWaitsForEachOtherMemberInItsRequestsTrace() throws Exception {
        int receiver = startReceiver();
        List<HttpJson> services = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Map<String, String> otel = exportingTo(receiver, "node-" + i);
            IndexerNode node = cluster.start(c -> c.withTracing(otel));
            SelectServiceConfig config = new SelectServiceConfig(
                    "127.0.0.1", 0, 120_000, 4096, 268_435_456L, 500, 0, List.of(), HttpConfig.DEFAULT);
            services.add(new HttpJson(SelectServiceCommand.deploy(
                            node, config, SelectionConfig.fromEnvironment(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false")))
                    .actualPort()));
        }
        for (HttpJson service : services) {
            HttpResponse<String> r = service.post(
                    "/workers",
                    "{\"worker_id\":1,\"model_name\":\"model\",\"endpoint\":\"http://w1\",\"block_size\":4}");
            assertEquals(201, r.statusCode(), r.body());
        }
        HttpResponse<String> r = services.get(0)
                .withHeader("traceparent", "00-" + TRACE_ID + "-" + PARENT_ID + "-01")
                .post(
                        "/reservations",
                        "{\"model_name\":\"model\",\"selection_id\":\"traced\",\"worker_id\":1,"
                                + "\"sequence_hashes\":[11,12],\"isl_tokens\":8,\"effective_prefill_tokens\":8}");
        assertEquals(201, r.statusCode(), r.body());

        Await.until(
                "node 1's handling of the push, under node 0's span of waiting for it, under the request's",
                ClusterFixture.WAIT,
                () -> received.stream()
                                .anyMatch(s -> s.service().equals("node-1")
                                        && names(ancestors(s)).contains("node-0 reservation.peer"))
                        && named("node-0", "reservation.peer").stream()
                                .anyMatch(p -> names(ancestors(p)).contains("node-0 POST /reservations")));
        Received peer = named("node-0", "reservation.peer").get(0);
        List<String> chain = names(ancestors(peer));
        assertEquals("node-0 POST /reservations", chain.get(chain.size() - 1), chain.toString());
        assertEquals(PARENT_ID, ancestors(peer).get(chain.size() - 1).parentId());
        assertTrue(
                named("node-0", "reservation.claim").stream()
                        .anyMatch(c -> c.traceId().equals(TRACE_ID)),
                "the claim is a span of the request: " + received);

        // A selection's booking is claimed and pushed after its overlaps came back on the service's own context.
        String selectTrace = "5bf92f3577b34da6a3ce929d0e0e4737";
        r = services.get(0)
                .withHeader("traceparent", "00-" + selectTrace + "-" + PARENT_ID + "-01")
                .post("/select_and_reserve", "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4,5,6,7,8]}");
        assertEquals(200, r.statusCode(), r.body());
        Await.until(
                "the selection's push to node 1 under the selection's request",
                ClusterFixture.WAIT,
                () -> named("node-0", "reservation.peer").stream()
                        .filter(p -> p.traceId().equals(selectTrace))
                        .anyMatch(p -> names(ancestors(p)).contains("node-0 POST /select_and_reserve")));
    }

    /** Settings that export {@code service}'s spans to the receiver on {@code port} within a tenth of a second. */
    private static Map<String, String> exportingTo(int port, String service) {
        return Map.of(
                "otel.exporter.otlp.endpoint",
                "http://127.0.0.1:" + port,
                "otel.service.name",
                service,
                "otel.bsp.schedule.delay",
                "100");
    }

    private static Map<String, String> with(Map<String, String> settings, String key, String value) {
        Map<String, String> out = new java.util.HashMap<>(settings);
        out.put(key, value);
        return out;
    }

    /** The spans {@code service} sent named {@code name}. */
    private List<Received> named(String service, String name) {
        return received.stream()
                .filter(s -> s.service().equals(service) && s.name().equals(name))
                .toList();
    }

    /** {@code span}'s parents as received, nearest first. */
    private List<Received> ancestors(Received span) {
        List<Received> out = new ArrayList<>();
        Received at = span;
        while (true) {
            String parent = at.parentId();
            Received next = received.stream()
                    .filter(s -> s.spanId().equals(parent))
                    .findFirst()
                    .orElse(null);
            if (next == null || out.size() > 64) {
                return out;
            }
            out.add(next);
            at = next;
        }
    }

    private static List<String> names(List<Received> spans) {
        return spans.stream().map(s -> s.service() + " " + s.name()).toList();
    }

    @Test
    void aGrpcCallIsAServerSpanOfTheCallersTrace() throws Exception {
        int receiver = startReceiver();
        IndexerNode node = IndexerNode.start(ServeConfig.local(0).withTracing(exportingTo(receiver, "node-0")));
        standalone.add(node);
        int port = node.serveGrpc(
                        new GrpcConfig("127.0.0.1", 0, 32, ClusterFixture.MODEL, "default"),
                        SecurityConfig.NONE,
                        RecoveryConfig.DEFAULT,
                        1)
                .toCompletionStage()
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        // A client on a Vert.x of its own, without a tracer: the traceparent is only the one set here.
        GrpcClient client = GrpcClient.client(receiverVertx);
        client.request(SocketAddress.inetSocketAddress(port, "127.0.0.1"), KVIndexerGrpcClient.MatchExternalKvPrefix)
                .compose(req -> {
                    req.headers().set("traceparent", "00-" + TRACE_ID + "-" + PARENT_ID + "-01");
                    return req.send(MatchExternalKvPrefixRequest.newBuilder()
                                    .addHashes(1L)
                                    .build())
                            .compose(GrpcClientResponse::last);
                })
                .toCompletionStage()
                .toCompletableFuture()
                .handle((r, t) -> r)
                .get(30, TimeUnit.SECONDS);

        Await.until("the gRPC call's server span", ClusterFixture.WAIT, () -> serverSpan() != null);
        assertEquals(PARENT_ID, serverSpan().parentId());
        assertEquals(
                "kv_indexer.v1.KVIndexer/MatchExternalKvPrefix", serverSpan().name());
    }

    /** Node 0's server span of the client's request, once exported. */
    /** Whether a span of node 1 in the client's trace has one of node 0's spans as its parent. */
    private boolean childOfNode0OnNode1() {
        return received.stream()
                .filter(s -> s.service().equals("node-1") && s.traceId().equals(TRACE_ID))
                .anyMatch(s -> received.stream()
                        .anyMatch(
                                p -> p.service().equals("node-0") && p.spanId().equals(s.parentId())));
    }

    private Received serverSpan() {
        return received.stream()
                .filter(s -> s.service().equals("node-0")
                        && s.traceId().equals(TRACE_ID)
                        && s.kind() == Span.SpanKind.SPAN_KIND_SERVER
                        && s.parentId().equals(PARENT_ID))
                .findFirst()
                .orElse(null);
    }

    /** An OTLP/HTTP receiver on loopback: POST /v1/traces, protobuf bodies; returns its port. */
    private int startReceiver() throws Exception {
        HttpServer server = receiverVertx
                .createHttpServer()
                .requestHandler(req -> req.body().onSuccess(body -> {
                    if (!req.path().equals("/v1/traces")) {
                        req.response().setStatusCode(404).end();
                        return;
                    }
                    try {
                        collect(ExportTraceServiceRequest.parseFrom(body.getBytes()));
                    } catch (Exception e) {
                        req.response().setStatusCode(400).end(String.valueOf(e));
                        return;
                    }
                    req.response()
                            .putHeader("Content-Type", "application/x-protobuf")
                            .end(Buffer.buffer(ExportTraceServiceResponse.getDefaultInstance()
                                    .toByteArray()));
                }));
        return server.listen(0, "127.0.0.1")
                .toCompletionStage()
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS)
                .actualPort();
    }

    private void collect(ExportTraceServiceRequest request) {
        HexFormat hex = HexFormat.of();
        for (ResourceSpans rs : request.getResourceSpansList()) {
            String service = rs.getResource().getAttributesList().stream()
                    .filter(a -> a.getKey().equals("service.name"))
                    .map(KeyValue::getValue)
                    .map(v -> v.getStringValue())
                    .findFirst()
                    .orElse("");
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (Span s : ss.getSpansList()) {
                    received.add(new Received(
                            service,
                            hex.formatHex(s.getTraceId().toByteArray()),
                            hex.formatHex(s.getSpanId().toByteArray()),
                            hex.formatHex(s.getParentSpanId().toByteArray()),
                            s.getName(),
                            s.getKind()));
                }
            }
        }
    }
}
