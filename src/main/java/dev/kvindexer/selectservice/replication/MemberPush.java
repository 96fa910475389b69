package dev.kvindexer.selectservice.replication;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.cluster.SealedBytes;
import dev.kvindexer.web.ContextHop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.ArrayList;
import java.util.List;

/**
 * Sends a change to every other member of the cluster over the clustered event bus and waits for each to apply it (or
 * to fail, or time out), so a replica's client hears of a change only once the others hold it. Each push is sealed to
 * the member it goes to; a member that died meanwhile catches up from the cluster's map instead.
 */
final class MemberPush {
    static final String VERTX_NODE_ID = "__vertx.nodeId";
    private static final long TIMEOUT_MILLIS = 2000;

    private final Vertx vertx;
    private final Context home;
    private final HazelcastInstance hazelcast;
    private final SealedBytes seals;
    private final String address;
    private final String kind;
    private final String nodeId;

    /**
     * @param address the prefix of every member's address for these pushes; a member's node id completes it
     * @param kind    the seal kind of these pushes
     */
    MemberPush(Vertx vertx, Context home, HazelcastInstance hazelcast, String address, String kind) {
        this.vertx = vertx;
        this.home = home;
        this.hazelcast = hazelcast;
        this.seals = SealedBytes.of(hazelcast);
        this.address = address;
        this.kind = kind;
        this.nodeId = hazelcast.getCluster().getLocalMember().getAttribute(VERTX_NODE_ID);
    }

    /** This member's own address for these pushes. */
    String ownAddress() {
        return address + nodeId;
    }

    /** The bytes of a push to this member, or null (counted) when its seal is not the cluster's. */
    byte[] opened(Buffer body) {
        return seals.open(kind, nodeId, body.getBytes());
    }

    Future<Void> push(byte[] bytes) {
        List<Future<?>> acks = new ArrayList<>();
        DeliveryOptions options = new DeliveryOptions().setSendTimeout(TIMEOUT_MILLIS);
        for (Member m : hazelcast.getCluster().getMembers()) {
            String other = m.getAttribute(VERTX_NODE_ID);
            if (other != null && !other.equals(nodeId)) {
                acks.add(vertx.eventBus()
                        .request(address + other, Buffer.buffer(seals.seal(kind, other, bytes)), options));
            }
        }
        return ContextHop.on(home, Future.join(acks).otherwiseEmpty().mapEmpty());
    }
}
