package dev.kvindexer.grpc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.GetExternalKvHitCountsRequest;
import dev.kvindexer.grpc.v1.KVIndexerGrpcService;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvRequest;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.metrics.GrpcMetrics;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.web.BearerAuth;
import dev.kvindexer.web.TlsPolicy;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerOptions;
import io.vertx.grpc.server.GrpcServerRequest;
import io.vertx.grpc.server.StatusException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC port: SGLang's {@code kv_indexer.v1.KVIndexer} over HTTP/2 on Vert.x's own gRPC server, so it shares the
 * event loops, TLS and bearer-token rules of the HTTP API. One instance per event loop, all sharing the port.
 *
 * <p>Each method takes its message as bytes and parses it here, after checking its size: a message past 8 MiB is
 * OUT_OF_RANGE ("query too large" to the router) as SGLang's server answers it, where Vert.x's own ceiling would say
 * RESOURCE_EXHAUSTED ("overloaded"). Vert.x's ceiling stays, above ours, as the bound on what a peer can make us hold.
 */
public final class GrpcVerticle extends VerticleBase {
    private static final Logger LOG = LoggerFactory.getLogger(GrpcVerticle.class);
    /** The largest message SGLang's server decodes. */
    static final int MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
    /** What the transport buffers before refusing on its own. */
    static final long TRANSPORT_MESSAGE_BYTES = 2L * MAX_MESSAGE_BYTES;

    private static final String PREFIX_METHOD = "MatchExternalKvPrefix";
    static final int MAX_CONCURRENT_CALLS = 64;
    private final ExternalKvService service;

    private final GrpcConfig config;
    private final SecurityConfig security;
    private final BearerAuth auth;
    private final GrpcMetrics metrics;
    private final NetworkBudget budget;
    private HttpServer server;

    public GrpcVerticle(
            ExternalKvService service,
            GrpcConfig config,
            SecurityConfig security,
            GrpcMetrics metrics,
            NetworkBudget budget) {
        this.budget = budget;
        this.service = service;
        this.metrics = metrics;
        this.config = config;
        this.security = security;
        this.auth = security.authToken() == null ? null : new BearerAuth(security.authToken());
    }

    /**
     * Serves {@code service} on the configured port from {@code instances} event loops; completes with the bound port.
     */
    public static Future<Integer> deploy(
            Vertx vertx,
            ExternalKvService service,
            GrpcConfig config,
            SecurityConfig security,
            GrpcMetrics metrics,
            NetworkBudget budget,
            int instances) {
        GrpcVerticle first = new GrpcVerticle(service, config, security, metrics, budget);
        metrics.watch(service);
        AtomicBoolean handedOut = new AtomicBoolean();
        return vertx.deployVerticle(
                        () -> handedOut.compareAndSet(false, true)
                                ? first
                                : new GrpcVerticle(service, config, security, metrics, budget),
                        new DeploymentOptions().setInstances(Math.max(1, instances)))
                .map(id -> first.server.actualPort());
    }

    @Override
    public Future<?> start() {
        GrpcServer grpc = GrpcServer.server(vertx, new GrpcServerOptions().setMaxMessageSize(TRANSPORT_MESSAGE_BYTES));
        bind(
                grpc,
                "ConfigureExpectedWorkers",
                ConfigureExpectedWorkersRequest.parser(),
                true,
                service::configureEverywhere);
        bind(
                grpc,
                "ReplaceExternalKvSnapshot",
                ReplaceExternalKvSnapshotRequest.parser(),
                true,
                service::replaceEverywhere);
        bind(grpc, "ApplyExternalKvBatch", ApplyExternalKvBatchRequest.parser(), true, service::applyEverywhere);
        bind(grpc, "MatchExternalKv", MatchExternalKvRequest.parser(), false, now(service::match));
        bind(grpc, "GetExternalKvHitCounts", GetExternalKvHitCountsRequest.parser(), false, now(service::hitCounts));
        bind(grpc, PREFIX_METHOD, MatchExternalKvPrefixRequest.parser(), false, service::matchPrefix);
        HttpServerOptions options = new HttpServerOptions()
                .setUseAlpn(true)
                // A connection that sends nothing (not even a frame of a call) is let go, as the HTTP port lets go.
                .setIdleTimeout(
                        (int) Math.min(Integer.MAX_VALUE, config.idleTimeout().toMillis()))
                .setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
                // SGLang's server serves 64 calls at once on one connection; the router opens more if it needs to.
                .setInitialSettings(new Http2Settings().setMaxConcurrentStreams(MAX_CONCURRENT_CALLS));
        TlsPolicy.apply(options, security);
        return vertx.createHttpServer(options)
                .requestHandler(request -> grpc.handle(BudgetedCall.of(request, budget)))
                .listen(config.port(), config.host())
                .onSuccess(s -> server = s);
    }

    /** A method answered at once, as a Future like those that wait. */
    private static <Req, Resp> Function<Req, Future<Resp>> now(Function<Req, Resp> call) {
        return r -> Future.succeededFuture(call.apply(r));
    }

    private <Req extends Message, Resp extends Message> void bind(
            GrpcServer grpc, String method, Parser<Req> parser, boolean changes, Function<Req, Future<Resp>> call) {
        ServiceMethod<Buffer, Resp> m = ServiceMethod.server(
                KVIndexerGrpcService.SERVICE_NAME, method, GrpcMessageEncoder.encoder(), GrpcMessageDecoder.IDENTITY);
        boolean guarded = auth != null && (changes || security.authAll());
        // Only the router's prefix query is shed for a spent deadline, as in SGLang's server: an event batch or a
        // recovery call is applied whenever it arrives, or the bridge's stream would lose it.
        boolean shedsLate = method.equals(PREFIX_METHOD);
        grpc.callHandler(m, request -> {
            long arrived = System.nanoTime();
            Spans.RequestSpan span = Spans.requestSpan();
            if (span != null) {
                span.called(KVIndexerGrpcService.SERVICE_NAME.fullyQualifiedName(), method);
            }
            if (guarded && !auth.accepts(request.headers().get("authorization"))) {
                refuse(
                        request,
                        arrived,
                        GrpcStatus.UNAUTHENTICATED,
                        "this method needs `authorization: Bearer <token>`");
                return;
            }
            request.handler(bytes -> answer(request, bytes, parser, call, shedsLate, arrived));
        });
    }

    private <Req extends Message, Resp extends Message> void answer(
            GrpcServerRequest<Buffer, Resp> request,
            Buffer bytes,
            Parser<Req> parser,
            Function<Req, Future<Resp>> call,
            boolean shedsLate,
            long arrived) {
        if (bytes.length() > MAX_MESSAGE_BYTES) {
            refuse(
                    request,
                    arrived,
                    GrpcStatus.OUT_OF_RANGE,
                    "message of " + bytes.length() + " bytes is larger than " + MAX_MESSAGE_BYTES);
            return;
        }
        Req message;
        try {
            message = parser.parseFrom(((BufferInternal) bytes).getByteBuf().nioBuffer());
        } catch (InvalidProtocolBufferException e) {
            // INTERNAL, as SGLang's server answers it: its gRPC library (tonic) reports an undecodable message so, and
            // its bridge retries that code where it gives up on INVALID_ARGUMENT.
            refuse(request, arrived, GrpcStatus.INTERNAL, "failed to decode Protobuf message: " + e.getMessage());
            return;
        }
        // A caller's deadline spent while the query waited: it no longer wants the answer.
        long timeoutMillis = request.timeout();
        if (shedsLate
                && timeoutMillis > 0
                && System.nanoTime() - arrived >= TimeUnit.MILLISECONDS.toNanos(timeoutMillis)) {
            refuse(
                    request,
                    arrived,
                    GrpcStatus.DEADLINE_EXCEEDED,
                    "the query waited longer than its caller's deadline");
            return;
        }
        Future<Resp> answer;
        try {
            answer = call.apply(message);
        } catch (RuntimeException e) {
            answer = Future.failedFuture(e);
        }
        answer.onComplete(ar -> {
            if (ar.succeeded()) {
                // Counted before the answer leaves, so a client that reads /metrics after it sees the call.
                metrics.record(request.methodName(), GrpcStatus.OK.name(), System.nanoTime() - arrived);
                request.response().end(ar.result());
            } else if (ar.cause() instanceof StatusException e) {
                refuse(request, arrived, e.status(), e.message());
            } else {
                LOG.error("{} failed", request.methodName(), ar.cause());
                refuse(request, arrived, GrpcStatus.INTERNAL, "internal error");
            }
        });
    }

    private void refuse(GrpcServerRequest<?, ?> request, long arrived, GrpcStatus status, String message) {
        metrics.record(request.methodName(), status.name(), System.nanoTime() - arrived);
        request.response().status(status).statusMessage(message).end();
    }
}
