package dev.kvindexer.web;

import dev.kvindexer.config.HttpLimits;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Closes the connections of one HTTP server that hold it up without finishing a request (HttpLimits): one that has
 * delivered no complete request head within the idle timeout of opening or of its last answer, even if it trickles
 * bytes (or sends nothing at all); and one whose request body has not all arrived within the request timeout of its
 * head, answered 408 first. A periodic sweep finds the late ones, so a request costs a few field writes rather than
 * timers of its own.
 *
 * <p>Confined to the server's event loop: its connections, requests and sweep all run there. It takes each
 * response's {@code endHandler}; route handlers use RoutingContext's end handlers instead.
 */
final class ConnectionDeadlines {
    private final Vertx vertx;
    private final long idleNanos;
    private final long requestNanos;
    private final String lateBody;
    private final Map<HttpConnection, Watched> connections = new HashMap<>();
    private final long timer;

    /** Call on the server's event loop. */
    ConnectionDeadlines(Vertx vertx, HttpLimits limits) {
        this.vertx = vertx;
        this.idleNanos = limits.idleTimeout().toNanos();
        this.requestNanos = limits.requestTimeout().toNanos();
        this.lateBody = "{\"error\":"
                + Json.encode("the request body did not arrive within "
                        + limits.requestTimeout().toMillis() + " ms of its headers")
                + "}";
        // A tenth of the shorter timeout, so a deadline is kept to within 10 %; never more often than every 10 ms.
        long shorter = Math.min(
                limits.idleTimeout().toMillis(), limits.requestTimeout().toMillis());
        this.timer = vertx.setPeriodic(Math.max(10, Math.min(1_000, shorter / 10)), id -> sweep());
    }

    /** A request whose head has arrived, and whose connection is still being read. */
    private record InFlight(HttpServerRequest request, long began) {}

    private final class Watched {
        final HttpConnection connection;
        final List<InFlight> inFlight = new ArrayList<>(1);
        /** When the connection last had no request in flight: opened, or answered its last one. */
        long idleSince;

        Watched(HttpConnection connection, long now) {
            this.connection = connection;
            this.idleSince = now;
        }

        void answered(InFlight request, long now) {
            if (inFlight.remove(request) && inFlight.isEmpty()) {
                idleSince = now;
            }
        }

        void check(long now) {
            // Should another end handler have replaced ours, the sweep still sees the answers.
            for (int i = inFlight.size() - 1; i >= 0; i--) {
                if (inFlight.get(i).request().response().ended()) {
                    answered(inFlight.get(i), now);
                }
            }
            if (inFlight.isEmpty()) {
                if (now - idleSince >= idleNanos) {
                    connection.close();
                }
                return;
            }
            for (InFlight r : inFlight) {
                if (!r.request().isEnded() && now - r.began() >= requestNanos) {
                    late(r.request());
                    return;
                }
            }
        }

        /** 408, then the connection closes: the rest of the body, should it come, has nowhere to go. */
        private void late(HttpServerRequest request) {
            HttpServerResponse response = request.response();
            if (response.headWritten()) {
                connection.close();
                return;
            }
            response.setStatusCode(408)
                    .putHeader("content-type", "application/json")
                    .putHeader("connection", "close")
                    .end(lateBody)
                    .onComplete(ar -> connection.close());
        }
    }

    /** A new connection: its head deadline starts now. */
    void opened(HttpConnection connection) {
        connections.put(connection, new Watched(connection, System.nanoTime()));
        connection.closeHandler(v -> connections.remove(connection));
    }

    /** A request's head has arrived: its body deadline starts now, and its connection's head deadline stops. */
    void began(HttpServerRequest request) {
        Watched watched = connections.get(request.connection());
        if (watched == null) {
            return;
        }
        InFlight r = new InFlight(request, System.nanoTime());
        watched.inFlight.add(r);
        request.response().endHandler(v -> watched.answered(r, System.nanoTime()));
    }

    private void sweep() {
        long now = System.nanoTime();
        // A copy: closing may run the close handler, which removes from the map, right away.
        for (Watched w : new ArrayList<>(connections.values())) {
            w.check(now);
        }
    }

    void stop() {
        vertx.cancelTimer(timer);
    }
}
