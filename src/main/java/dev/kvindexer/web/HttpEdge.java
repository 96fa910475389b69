package dev.kvindexer.web;

import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SecurityConfig;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP server set up for untrusted clients, as both services run theirs: HTTPS by {@link TlsPolicy}, connections
 * held open without finishing a request closed ({@link ConnectionDeadlines}), and the requests the HTTP codec refuses
 * by itself answered with the same {@code {"error": "..."}} body as every other error.
 */
public final class HttpEdge {
    private final HttpServer server;
    private final ConnectionDeadlines deadlines;

    private HttpEdge(HttpServer server, ConnectionDeadlines deadlines) {
        this.server = server;
        this.deadlines = deadlines;
    }

    /** Listens with {@code handler} (a Router) taking every well-formed request. Call on the verticle's context. */
    public static Future<HttpEdge> listen(
            Vertx vertx,
            Handler<HttpServerRequest> handler,
            HttpConfig limits,
            SecurityConfig security,
            String host,
            int port) {
        // The codec's idle timeout is a backstop for what the deadlines do not watch, such as a client that stops
        // reading its answer; at twice the longer deadline it never cuts one short (a stalled body gets its 408).
        long backstop = 2
                * Math.max(
                        limits.idleTimeout().toMillis(), limits.requestTimeout().toMillis());
        HttpServerOptions options = new HttpServerOptions()
                .setIdleTimeout((int) Math.min(Integer.MAX_VALUE, backstop))
                .setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
                // Cleartext HTTP/2 makes Vert.x wait for a whole first request head before it creates the
                // connection, so a head trickled byte by byte would go unseen by the deadlines. Clients speak
                // HTTP/1.1 to these services; one that offers h2c is answered in HTTP/1.1.
                .setHttp2ClearTextEnabled(false)
                // No WebSocket is served: without these Vert.x puts a WebSocket extension handler on every
                // connection, which looks at the headers of every request and every answer.
                .setPerMessageWebSocketCompressionSupported(false)
                .setPerFrameWebSocketCompressionSupported(false);
        TlsPolicy.apply(options, security);
        ConnectionDeadlines deadlines = new ConnectionDeadlines(vertx, limits);
        Handler<HttpServerRequest> requests = request -> {
            if (request.version() == null) {
                refuse(request, 501, "HTTP version not supported: use HTTP/1.1, HTTP/1.0 or HTTP/2");
                return;
            }
            deadlines.began(request);
            handler.handle(request);
        };
        HttpServer server = vertx.createHttpServer(options)
                .requestHandler(requests)
                .invalidRequestHandler(request -> refuseMalformed(request, options))
                .connectionHandler(connection -> {
                    deadlines.opened(connection);
                    // Vert.x answers an HTTP/1 version it does not know ("GET / HTTP/1.2") 501 with an empty body,
                    // in a handler it puts before ours on every HTTP/1 connection; set on the connection itself,
                    // ours sees those requests too. (That handler also dispatches WebSockets, which we do not serve.)
                    if (connection instanceof io.vertx.core.http.impl.HttpServerConnection internal) {
                        internal.handler(requests);
                    }
                });
        return server.listen(port, host).map(s -> new HttpEdge(s, deadlines)).onFailure(t -> deadlines.stop());
    }

    /** The HTTP codec could not parse the request: its line or headers are too long, or it is no HTTP at all. */
    private static void refuseMalformed(HttpServerRequest request, HttpServerOptions options) {
        Throwable cause = request.decoderResult().cause();
        if (cause instanceof TooLongHttpLineException) {
            refuse(request, 414, "request line longer than " + options.getMaxInitialLineLength() + " bytes");
        } else if (cause instanceof TooLongHttpHeaderException) {
            refuse(request, 431, "request headers larger than " + options.getMaxHeaderSize() + " bytes");
        } else {
            refuse(request, 400, "malformed HTTP request" + (cause == null ? "" : ": " + cause.getMessage()));
        }
    }

    /** Answers and closes: what else the client sent on this connection cannot be trusted to be a request. */
    private static void refuse(HttpServerRequest request, int status, String message) {
        new HttpError(status, message)
                .answer(request.response().putHeader("connection", "close"))
                .onComplete(ar -> request.connection().close());
    }

    /** The bound port (differs from the configured one when that was 0). */
    public int actualPort() {
        return server.actualPort();
    }

    public Future<Void> close() {
        deadlines.stop();
        return server.close();
    }
}
