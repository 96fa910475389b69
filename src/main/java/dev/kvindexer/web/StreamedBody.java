package dev.kvindexer.web;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;

/**
 * Writes a large body made a piece at a time, each piece made only when the client has taken the ones before: the
 * writer stops while the connection's write queue is full and goes on from its drain handler, and it yields the
 * event loop between pieces, so one slow or huge download holds neither memory nor the loop.
 */
public final class StreamedBody {
    /** Makes the body: the next piece, or null at its end. May throw; the response is then reset. */
    @FunctionalInterface
    public interface Pieces {
        Buffer next() throws Exception;
    }

    private final HttpServerResponse response;
    private final Pieces pieces;
    private final Promise<Void> done = Promise.promise();

    private StreamedBody(HttpServerResponse response, Pieces pieces) {
        this.response = response;
        this.pieces = pieces;
    }

    /**
     * Writes every piece to {@code response} (chunked, its status and headers set by the caller) and ends it;
     * completes when the body is written, fails (and resets the connection) when making a piece failed or the client
     * went away. Call on the response's context.
     */
    public static Future<Void> write(HttpServerResponse response, Pieces pieces) {
        StreamedBody body = new StreamedBody(response.setChunked(true), pieces);
        response.closeHandler(v -> body.done.tryFail("the client closed the connection"));
        body.more();
        return body.done.future();
    }

    private void more() {
        if (done.future().isComplete()) {
            return;
        }
        try {
            while (!response.writeQueueFull()) {
                Buffer piece = pieces.next();
                if (piece == null) {
                    response.end().onComplete(done);
                    return;
                }
                response.write(piece);
                if (!response.writeQueueFull()) {
                    // Let the loop serve others before the next piece is made.
                    Vertx.currentContext().runOnContext(v -> more());
                    return;
                }
            }
            response.drainHandler(v -> more());
        } catch (Exception e) {
            done.tryFail(e);
            if (!response.closed()) {
                response.reset();
            }
        }
    }
}
