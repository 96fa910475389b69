package dev.kvindexer.node;

import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.cluster.MemberChannel;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.grpc.ExternalKvPeers;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC service's peers in a kvindexer cluster: the bridge's changes to every other member serving the same model
 * and routing group, and a member's whole state to one that starts, over the clustered event bus, sealed as every
 * message between members is.
 */
final class ExternalKvMembers implements ExternalKvPeers {
    private static final Logger LOG = LoggerFactory.getLogger(ExternalKvMembers.class);
    static final String CHANGES = "kvindexer.grpc.changes.";
    static final String STATES = "kvindexer.grpc.state.";

    private final Vertx vertx;
    private final MemberChannel changes;
    private final MemberChannel states;
    private final long maxStateBytes;
    private final Duration stateTimeout;
    private MessageConsumer<?> taking;
    private MessageConsumer<?> answering;

    /**
     * @param stateTimeout  how long a starting member waits for another's state, whichever members it asks
     * @param maxStateBytes the largest state a member sends (what one message between members may carry)
     */
    ExternalKvMembers(
            Vertx vertx,
            HazelcastInstance hazelcast,
            PartitionKey served,
            Spans spans,
            Duration stateTimeout,
            long maxStateBytes) {
        this.vertx = vertx;
        String scope = served.dumpKey() + ".";
        this.changes = new MemberChannel(
                vertx, hazelcast, CHANGES + scope, "grpc_changes", MemberChannel.TIMEOUT, spans, "external_kv.peer");
        this.states = new MemberChannel(
                vertx, hazelcast, STATES + scope, "grpc_states", stateTimeout, spans, "external_kv.state");
        this.maxStateBytes = maxStateBytes;
        this.stateTimeout = stateTimeout;
    }

    @Override
    public Future<Void> listen(Consumer<byte[]> apply, LongFunction<byte[]> state) {
        taking = changes.listen(MemberChannel.applying(apply), LOG, "gRPC bridge change");
        answering = states.listen(
                request -> vertx.executeBlocking(() -> state.apply(maxStateBytes), false),
                LOG,
                "gRPC bridge state request");
        return Future.all(taking.completion(), answering.completion()).mapEmpty();
    }

    @Override
    public Future<Void> stop() {
        return Future.all(unregister(taking), unregister(answering)).mapEmpty();
    }

    private static Future<Void> unregister(MessageConsumer<?> consumer) {
        return consumer == null ? Future.succeededFuture() : consumer.unregister();
    }

    @Override
    public Future<Void> aside(Runnable work) {
        return vertx.executeBlocking(
                () -> {
                    work.run();
                    return null;
                },
                false);
    }

    @Override
    public Future<Integer> toAll(byte[] change) {
        return changes.toAll(change);
    }

    /** The members are asked in turn; the whole copy waits at most the state timeout. */
    @Override
    public Future<byte[]> stateOfAny() {
        Promise<byte[]> copied = Promise.promise();
        long timer = vertx.setTimer(
                stateTimeout.toMillis(),
                id -> copied.tryFail("no member gave its state within " + stateTimeout.toSeconds() + " s"));
        states.askAny(new byte[0]).onComplete(done -> {
            vertx.cancelTimer(timer);
            if (done.succeeded()) {
                copied.tryComplete(done.result());
            } else {
                copied.tryFail(done.cause());
            }
        });
        return copied.future();
    }
}
