package dev.kvindexer.selectservice.replication;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.cluster.SealedBytes;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.web.ContextHop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;

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
    private final Spans spans;
    private final String spanName;

    /**
     * @param address  the prefix of every member's address for these pushes; a member's node id completes it
     * @param kind     the seal kind of these pushes
     * @param spanName what the span of each member a push waits for is called
     */
    MemberPush(
            Vertx vertx,
            Context home,
            HazelcastInstance hazelcast,
            String address,
            String kind,
            Spans spans,
            String spanName) {
        this.spans = spans;
        this.spanName = spanName;
        this.vertx = vertx;
        this.home = home;
        this.hazelcast = hazelcast;
        this.seals = SealedBytes.of(hazelcast);
        this.address = address;
        this.kind = kind;
        this.nodeId = hazelcast.getCluster().getLocalMember().getAttribute(VERTX_NODE_ID);
    }

    /**
     * Takes the pushes other members send this one, on the caller's context: each is opened and applied, then
     * acknowledged. One without the cluster's seal is answered 401 (and counted), one {@code apply} refuses 400.
     *
     * @param what names the pushes in the log and the refusals
     */
    MessageConsumer<Buffer> listen(Consumer<byte[]> apply, Logger log, String what) {
        return vertx.eventBus().consumer(address + nodeId, message -> {
            byte[] push = seals.open(kind, nodeId, message.body().getBytes());
            if (push == null) {
                message.fail(401, "unsealed " + what);
                return;
            }
            try {
                apply.accept(push);
                message.reply("ok");
            } catch (RuntimeException e) {
                log.warn("refused a {}: {}", what, e.toString());
                message.fail(400, "malformed " + what);
            }
        });
    }

    Future<Void> push(byte[] bytes) {
        List<Future<?>> acks = new ArrayList<>();
        DeliveryOptions options = new DeliveryOptions().setSendTimeout(TIMEOUT_MILLIS);
        for (Member m : hazelcast.getCluster().getMembers()) {
            String other = m.getAttribute(VERTX_NODE_ID);
            if (other != null && !other.equals(nodeId)) {
                acks.add(spans.around(
                        spanName,
                        t -> t.put("kvindexer.node", other),
                        () -> vertx.eventBus()
                                .request(address + other, Buffer.buffer(seals.seal(kind, other, bytes)), options)));
            }
        }
        return ContextHop.on(home, Future.join(acks).otherwiseEmpty().mapEmpty());
    }
}
