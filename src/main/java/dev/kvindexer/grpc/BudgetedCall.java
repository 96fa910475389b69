package dev.kvindexer.grpc;

import dev.kvindexer.net.NetworkBudget;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.internal.http.HttpServerRequestInternal;
import io.vertx.core.internal.http.HttpServerRequestWrapper;

/**
 * One gRPC call's request as Vert.x's gRPC server reads it, with every chunk of its body reserved from the node's
 * network budget before the server may buffer it (a call's message is held whole until it is parsed, up to 8 MiB, and
 * a connection carries 64 calls). A chunk the budget cannot hold resets the call's stream: the peer sees the call
 * cancelled and may try again. What was reserved is given back once, when the body has been read or the stream ends
 * otherwise.
 */
final class BudgetedCall extends HttpServerRequestWrapper {
    private final NetworkBudget budget;
    private long held;
    private boolean released;
    private boolean refused;

    private BudgetedCall(HttpServerRequestInternal request, NetworkBudget budget) {
        super(request);
        this.budget = budget;
    }

    /** {@code request} under {@code budget}; a request of a kind the wrapper cannot stand for goes as it is. */
    static HttpServerRequest of(HttpServerRequest request, NetworkBudget budget) {
        return request instanceof HttpServerRequestInternal internal ? new BudgetedCall(internal, budget) : request;
    }

    @Override
    public HttpServerRequest handler(Handler<Buffer> handler) {
        return super.handler(
                handler == null
                        ? null
                        : chunk -> {
                            if (refused) {
                                return;
                            }
                            if (!budget.tryReserve(chunk.length(), held)) {
                                refused = true;
                                budget.refused(NetworkBudget.GRPC);
                                release();
                                delegate.response().reset(CANCEL);
                                return;
                            }
                            held += chunk.length();
                            handler.handle(chunk);
                        });
    }

    @Override
    public HttpServerRequest endHandler(Handler<Void> handler) {
        return super.endHandler(v -> {
            // The body is read: the server has made the call's message out of it, and holds it no more.
            release();
            if (handler != null) {
                handler.handle(v);
            }
        });
    }

    @Override
    public HttpServerRequest exceptionHandler(Handler<Throwable> handler) {
        return super.exceptionHandler(t -> {
            release();
            if (handler != null) {
                handler.handle(t);
            }
        });
    }

    private void release() {
        if (!released) {
            released = true;
            budget.release(held);
        }
    }

    /** HTTP/2's CANCEL error code. */
    private static final long CANCEL = 0x8;
}
