package dev.kvindexer.grpc;

import io.vertx.core.Future;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * The other members of a kvindexer cluster, as the bridge's state travels between them (docs/api/sglang-grpc.md#in-a-cluster):
 * what {@code node} gives the gRPC service. The bytes are the service's own; this only carries them, sealed.
 */
public interface ExternalKvPeers {
    /** A node on its own: nothing to share, nobody to copy from. */
    ExternalKvPeers NONE = new ExternalKvPeers() {
        @Override
        public Future<Void> listen(Consumer<byte[]> changes, LongFunction<byte[]> state) {
            return Future.succeededFuture();
        }

        @Override
        public Future<Void> stop() {
            return Future.succeededFuture();
        }

        @Override
        public Future<Void> aside(Runnable work) {
            work.run();
            return Future.succeededFuture();
        }

        @Override
        public Future<Integer> toAll(byte[] change) {
            return Future.succeededFuture(0);
        }

        @Override
        public Future<byte[]> stateOfAny() {
            return Future.failedFuture("no other member");
        }
    };

    /**
     * Starts taking the other members' messages: {@code changes} applies one (a RuntimeException refuses it), {@code
     * state} answers a member that starts and copies this one, with this member's state of at most the bytes it is
     * given (a RuntimeException refuses).
     */
    Future<Void> listen(Consumer<byte[]> changes, LongFunction<byte[]> state);

    /** Stops taking the other members' messages. */
    Future<Void> stop();

    /** Runs {@code work} off the event loops (a copied state can take seconds to apply). */
    Future<Void> aside(Runnable work);

    /**
     * Sends a change applied here to every other member; completes once each applied it, refused it or timed out,
     * with how many did not apply it.
     */
    Future<Integer> toAll(byte[] change);

    /** The state of one other member that serves the port; fails when none does. */
    Future<byte[]> stateOfAny();
}
