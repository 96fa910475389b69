package dev.kvindexer.selectservice.replication;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.ExtendedMapEntry;
import com.hazelcast.map.IMap;
import dev.kvindexer.cluster.MemberChannel;
import dev.kvindexer.cluster.SealedBytes;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.select.SessionBindings;
import dev.kvindexer.web.ContextHop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Session bindings every replica of a cluster agrees on, shared as reservations are ({@link ClusterLoad}): a
 * Hazelcast map keyed by partition and session holds each binding's newest version (a write of an older one leaves
 * it), with the binding's idle TTL as the entry's, and before a client hears of a booking every other member has been
 * pushed its binding over the clustered event bus. A member that missed a push or joined later catches up from the
 * map on every anti-entropy pass. Every replica applies what it gets by version, as from Dynamo's mesh, so all of them
 * route a session to the same worker. Records and pushes are sealed with the cluster's auth token.
 */
public final class ClusterBindings {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterBindings.class);
    public static final String MAP = "kvindexer.select.session-bindings";
    public static final String ADDRESS = "kvindexer.select.bindings.";
    /** Seal kinds (and the rejection counter's sources): records in the map, pushes to a member. */
    public static final String RECORDS = "session_bindings";

    public static final String PUSHES = "session_binding_pushes";

    private final Vertx vertx;
    private final Context home;
    private final IMap<String, byte[]> map;
    private final SessionBindings sessions;
    private final long ttlMillis;
    private final long writerId;
    private final SealedBytes seals;
    private final MemberChannel pushes;
    private final Spans spans;
    /** Shares under way: a client's answer waits for them. */
    private final List<Future<Void>> sharing = new ArrayList<>();

    private MessageConsumer<Buffer> consumer;
    private long timer = -1;

    /**
     * Call on the service's context: pushes from other members are applied there.
     *
     * @param writerId the writer of this replica's bindings, whose records it does not read back
     */
    public ClusterBindings(
            Vertx vertx,
            Context home,
            HazelcastInstance hazelcast,
            Spans spans,
            SessionBindings sessions,
            long ttlMillis,
            long writerId) {
        this.vertx = vertx;
        this.home = home;
        this.map = hazelcast.getMap(MAP);
        this.sessions = sessions;
        this.ttlMillis = ttlMillis;
        this.writerId = writerId;
        this.seals = SealedBytes.of(hazelcast);
        this.spans = spans;
        this.pushes = new MemberChannel(
                vertx, hazelcast, ADDRESS, PUSHES, MemberChannel.TIMEOUT, spans, "session_binding.peer");
    }

    public Future<Void> start(long antiEntropyMillis) {
        consumer = pushes.listen(
                MemberChannel.applying(push -> sessions.apply(AffinityEventCodec.decode(push))),
                LOG,
                "session binding push");
        timer = vertx.setPeriodic(antiEntropyMillis, id -> reconcile());
        return consumer.completion().compose(v -> reconcile());
    }

    public void stop() {
        vertx.cancelTimer(timer);
        if (consumer != null) {
            consumer.unregister();
        }
    }

    /** A binding made or refreshed here: into the map unless a newer one is there, then to every other member. */
    public void share(SessionBindings.Binding b) {
        byte[] bytes = AffinityEventCodec.encode(b);
        String key = key(b);
        // the map's answer comes back on the service's own context: the pushes continue the request's trace there
        Spans.Parent request = spans.parent();
        Future<Void> done = ContextHop.on(
                        home, map.submitToKey(key, new KeepNewer(seals.seal(RECORDS, key, bytes), ttlMillis)))
                .compose(v -> request.within(
                        () -> ContextHop.on(home, pushes.toAll(bytes).<Void>mapEmpty())))
                .onFailure(t -> LOG.warn("cluster session bindings: a share failed: {}", t.toString()));
        sharing.add(done);
        done.onComplete(r -> sharing.remove(done));
    }

    /** Completes once every share started so far is done (failed ones included: a binding is best effort). */
    public Future<Void> settled() {
        return sharing.isEmpty()
                ? Future.succeededFuture()
                : Future.join(new ArrayList<>(sharing)).otherwiseEmpty().mapEmpty();
    }

    /** Applies every binding the map holds: what a push missed, or what was bound before this member joined. */
    private Future<Void> reconcile() {
        return vertx.<Map<String, byte[]>>executeBlocking(() -> new HashMap<>(map))
                .compose(snapshot -> ContextHop.on(home, Future.succeededFuture(snapshot)))
                .map(snapshot -> {
                    snapshot.forEach((key, stored) -> {
                        byte[] bytes = seals.open(RECORDS, key, stored);
                        if (bytes == null) {
                            return;
                        }
                        try {
                            SessionBindings.Binding b = AffinityEventCodec.decode(bytes);
                            if (b.version().writerId() != writerId) {
                                sessions.catchUp(b);
                            }
                        } catch (IllegalArgumentException e) {
                            LOG.warn("cluster session bindings: skipping an undecodable record {}", key);
                        }
                    });
                    return (Void) null;
                })
                .onFailure(t -> LOG.warn("cluster session bindings: anti-entropy pass failed: {}", t.toString()));
    }

    /** The map key of a binding: lengths first, so no model, group or session id can pass for another. */
    public static String key(SessionBindings.Binding b) {
        String m = b.partition().modelName();
        String g = b.partition().routingGroup();
        return m.length() + ":" + m + g.length() + ":" + g + b.sessionId();
    }

    /**
     * Stores a binding unless the map holds a newer version of it, with the idle TTL as the entry's. Runs on the
     * entry's owner, which checks both seals: a forged record is replaced, a forged write changes nothing.
     */
    static final class KeepNewer implements EntryProcessor<String, byte[], Void>, HazelcastInstanceAware {
        private static final long serialVersionUID = 1L;
        private final byte[] offer;
        private final long ttlMillis;
        private transient SealedBytes seals;

        KeepNewer(byte[] offer, long ttlMillis) {
            this.offer = offer;
            this.ttlMillis = ttlMillis;
        }

        @Override
        public void setHazelcastInstance(HazelcastInstance member) {
            seals = SealedBytes.of(member);
        }

        @Override
        public Void process(Map.Entry<String, byte[]> entry) {
            byte[] incoming = seals.open(RECORDS, entry.getKey(), offer);
            if (incoming == null) {
                return null;
            }
            SessionBindings.Version offered =
                    AffinityEventCodec.decode(incoming).version();
            byte[] stored = entry.getValue() == null ? null : seals.open(RECORDS, entry.getKey(), entry.getValue());
            if (stored != null && AffinityEventCodec.decode(stored).version().compareTo(offered) > 0) {
                return null;
            }
            ((ExtendedMapEntry<String, byte[]>) entry).setValue(offer, ttlMillis, TimeUnit.MILLISECONDS);
            return null;
        }
    }
}
