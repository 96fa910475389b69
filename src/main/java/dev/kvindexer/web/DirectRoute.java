package dev.kvindexer.web;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One route answered ahead of the router, for a service's hottest request. A request whose head shows the route would
 * take it as it stands (the method, the exact path, no query string, HTTP/1 with a declared body within the limit and
 * no other framing, and whatever {@code admits} asks of its headers) is read and answered here, accounted as every
 * routed request is ({@link RequestPreamble#admit}). Any other request goes to the router, which answers it as it
 * always has, refusals included; so a request the route's handler would see differently never reaches it.
 */
public final class DirectRoute implements Handler<HttpServerRequest> {
    private static final Logger LOG = LoggerFactory.getLogger(DirectRoute.class);

    /** Answers a request from its whole body. It answers every request, its errors included, and throws nothing. */
    @FunctionalInterface
    public interface BodyAnswer {
        void answer(Buffer body, HttpServerResponse response);
    }

    private final HttpMethod method;
    private final String path;
    private final long maxBody;
    private final Predicate<HttpServerRequest> admits;
    private final RequestPreamble preamble;
    private final BodyAnswer answer;
    private final Handler<HttpServerRequest> router;

    /**
     * @param maxBody  the route's body limit: a larger declared body goes to the router for its 413
     * @param admits   what else the head must show (its Content-Type, a token the route asks for)
     * @param preamble the router's preamble, so both ways of answering log, measure and hold bodies alike
     * @param router   takes every other request
     */
    public DirectRoute(
            HttpMethod method,
            String path,
            long maxBody,
            Predicate<HttpServerRequest> admits,
            RequestPreamble preamble,
            BodyAnswer answer,
            Handler<HttpServerRequest> router) {
        this.method = method;
        this.path = path;
        this.maxBody = maxBody;
        this.admits = admits;
        this.preamble = preamble;
        this.answer = answer;
        this.router = router;
    }

    @Override
    public void handle(HttpServerRequest request) {
        long body = plainBody(request);
        if (body < 0 || !admits.test(request) || !preamble.admit(request, path, body)) {
            router.handle(request);
            return;
        }
        HttpServerResponse response = request.response();
        if (request.getHeader("expect") != null && request.version() != HttpVersion.HTTP_1_0) {
            // a client waiting for leave to send its body (curl does for large ones) gets it, as the router gives it
            // (HTTP/1.0 has no interim answers)
            response.writeContinue();
        }
        // gathered into a buffer of the declared length, not one grown by doubling as the bytes arrive
        Buffer gathered = Buffer.buffer((int) body);
        request.handler(gathered::appendBuffer);
        request.endHandler(end -> answered(gathered, response));
    }

    /** The route's answer; what it throws after all is the router's 500, so no request is left unanswered. */
    private void answered(Buffer body, HttpServerResponse response) {
        try {
            answer.answer(body, response);
        } catch (Throwable t) {
            LOG.error("direct {} {} failed", method, path, t);
            if (!response.ended() && !response.closed()) {
                new HttpError(500, "internal error: " + t).answer(response);
            }
        }
    }

    private static boolean continueOrNothing(String expect) {
        return expect == null || "100-continue".equalsIgnoreCase(expect.trim());
    }

    /** The body a request declares when the route takes it as it stands, else -1. */
    private long plainBody(HttpServerRequest request) {
        HttpVersion version = request.version();
        if (request.method() != method
                || (version != HttpVersion.HTTP_1_1 && version != HttpVersion.HTTP_1_0)
                || request.query() != null
                || !path.equals(request.path())
                || request.getHeader("transfer-encoding") != null
                || !continueOrNothing(request.getHeader("expect"))) {
            return -1;
        }
        long declared = ContentLength.of(request);
        return declared <= maxBody ? declared : -1;
    }
}
