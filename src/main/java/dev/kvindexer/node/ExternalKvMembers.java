package dev.kvindexer.node;

import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.cluster.MemberChannel;
import dev.kvindexer.grpc.ExternalKvPeers;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC service's peers in a kvindexer cluster: the bridge's changes to every other member, and a member's whole
 * state to one that starts, over the clustered event bus, sealed as every message between members is.
 */
final class ExternalKvMembers implements ExternalKvPeers {
    private static final Logger LOG = LoggerFactory.getLogger(ExternalKvMembers.class);
    static final String CHANGES = "kvindexer.grpc.changes.";
    static final String STATES = "kvindexer.grpc.state.";

    private final Vertx vertx;
    private final MemberChannel changes;
    private final MemberChannel states;
    private final long maxStateBytes;

    /**
     * @param stateTimeout  how long a starting member waits for another's state
     * @param maxStateBytes the largest state a member sends (what one message between members may carry)
     */
    ExternalKvMembers(
            Vertx vertx, HazelcastInstance hazelcast, Spans spans, Duration stateTimeout, long maxStateBytes) {
        this.vertx = vertx;
        this.changes = new MemberChannel(
                vertx, hazelcast, CHANGES, "grpc_changes", MemberChannel.TIMEOUT, spans, "external_kv.peer");
        this.states =
                new MemberChannel(vertx, hazelcast, STATES, "grpc_states", stateTimeout, spans, "external_kv.state");
        this.maxStateBytes = maxStateBytes;
    }

    @Override
    public Future<Void> listen(Consumer<byte[]> apply, Supplier<byte[]> state) {
        Future<Void> taking = changes.listen(MemberChannel.applying(apply), LOG, "gRPC bridge change")
                .completion();
        Future<Void> answering = states.listen(
                        request -> vertx.executeBlocking(() -> {
                            byte[] bytes = state.get();
                            if (bytes.length > maxStateBytes) {
                                throw new IllegalStateException("this member's bridge state of " + bytes.length
                                        + " bytes is larger than a message between members may be ("
                                        + maxStateBytes + ")");
                            }
                            return bytes;
                        }),
                        LOG,
                        "gRPC bridge state request")
                .completion();
        return Future.all(taking, answering).mapEmpty();
    }

    @Override
    public Future<Void> toAll(byte[] change) {
        return changes.toAll(change);
    }

    @Override
    public Future<byte[]> stateOfAny() {
        return states.askAny(new byte[0]);
    }
}
