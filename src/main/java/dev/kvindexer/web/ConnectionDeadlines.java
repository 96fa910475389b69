package dev.kvindexer.web;

import dev.kvindexer.config.HttpConfig;
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
 * Closes the connections of one HTTP server that hold it up without finishing a request (HttpConfig): one that has
 * delivered no complete request head within the idle timeout of opening or of its last answer, even if it trickles
 * bytes (or sends nothing at all); and one whose request body has not all arrived within the request timeout of its
 * head, answered 408 first. A periodic sweep finds the late ones, so a request costs a few field writes rather than
 * timers of its own.
 *
 * <p>Confined to the server's event loop: its connections, requests and sweep all run there. It sets each
 * response's {@code endHandler}, which a router's end handlers replace; so an answered request is also let go when
 * its connection's next request begins, and no request outlives its answer by more than that or a sweep.
 */
final class ConnectionDeadlines {
    private final Vertx vertx;
    private final long idleNanos;
    private final long requestNanos;
    private final String lateBody;
    private final Map<HttpConnection, Watched> connections = new HashMap<>();
    private final long timer;

    /** Call on the server's event loop. */
    ConnectionDeadlines(Vertx vertx, HttpConfig limits) {
        this(vertx, limits, sweepMillis(limits));
    }

    /** A tenth of the shorter timeout, so a deadline is kept to within 10 %; never more often than every 10 ms. */
    private static long sweepMillis(HttpConfig limits) {
        long shorter = Math.min(
                limits.idleTimeout().toMillis(), limits.requestTimeout().toMillis());
        return Math.max(10, Math.min(1_000, shorter / 10));
    }

    /** With the sweep every {@code sweepMillis} (tests sweep seldom, to see what requests let go of without it). */
    ConnectionDeadlines(Vertx vertx, HttpConfig limits, long sweepMillis) {
        this.vertx = vertx;
        this.idleNanos = limits.idleTimeout().toNanos();
        this.requestNanos = limits.requestTimeout().toNanos();
        this.lateBody = "{\"error\":"
                + Json.encode("the request body did not arrive within "
                        + limits.requestTimeout().toMillis() + " ms of its headers")
                + "}";
        this.timer = vertx.setPeriodic(sweepMillis, id -> sweep());
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

        /**
         * Drops the requests already answered. Another end handler may have replaced ours (the router's does), so the
         * answer is seen here too: each new request and each sweep looks, and an answered request, its body and its
         * routing context are not kept until the next sweep.
         */
        void forgetAnswered(long now) {
            for (int i = inFlight.size() - 1; i >= 0; i--) {
                if (inFlight.get(i).request().response().ended()) {
                    answered(inFlight.get(i), now);
                }
            }
        }

        void check(long now) {
            forgetAnswered(now);
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
        long now = System.nanoTime();
        watched.forgetAnswered(now);
        InFlight r = new InFlight(request, now);
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

    /** Requests held, answered or not, over every connection. */
    int held() {
        int n = 0;
        for (Watched w : connections.values()) {
            n += w.inFlight.size();
        }
        return n;
    }

    void stop() {
        vertx.cancelTimer(timer);
    }
}
