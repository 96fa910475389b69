package dev.kvindexer.selectservice;

import dev.kvindexer.event.Refusal;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.cluster.Member;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import dev.kvindexer.cluster.SealedBytes;
import dev.kvindexer.select.ReservationRecord;
import dev.kvindexer.select.SelectionState;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reservations every replica of a cluster agrees on. A Hazelcast map keyed by reservation id is the authority: a
 * booking claims its id there (a second claim is a 409 wherever it comes from), a lifecycle step is applied to the
 * stored record atomically, a release removes it. Before the client gets its answer, the new state is pushed to
 * every other member over the clustered event bus and applied there, so any replica's next selection counts it.
 * A member that missed a push, joined later, or outlived one that died catches up from the map on every
 * anti-entropy pass, which also ends bookings past their expiry, measured from admission.
 *
 * <p>Records in the map and pushes on the bus are sealed with the cluster's auth token ({@link SealedBytes}): under a
 * token, whoever reaches the cluster ports without it can neither plant load nor advance or end a reservation by
 * writing the map or sending a push; what is unsealed is ignored and counted.
 */
final class ClusterLoad {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterLoad.class);
    static final String MAP = "kvindexer.select.reservations";
    static final String ADDRESS = "kvindexer.select.load.";
    private static final String VERTX_NODE_ID = "__vertx.nodeId";
    private static final byte UPSERT = 1;
    private static final byte FORGET = 2;
    private static final long PUSH_TIMEOUT_MILLIS = 2000;
    /** Seal kinds (and the rejection counter's sources): records in the map, pushes to a member. */
    static final String RECORDS = "reservations";
    static final String PUSHES = "reservation_pushes";

    private final Vertx vertx;
    private final Context home;
    private final HazelcastInstance hazelcast;
    private final IMap<String, byte[]> map;
    private final SelectionState state;
    private final long expiryMillis;
    private final String nodeId;
    private final SealedBytes seals;
    private MessageConsumer<Buffer> consumer;
    private long timer = -1;

    /** Call on the service's context: pushes from other members are applied there. */
    ClusterLoad(Vertx vertx, Context home, HazelcastInstance hazelcast, SelectionState state, long expiryMillis) {
        this.vertx = vertx;
        this.home = home;
        this.hazelcast = hazelcast;
        this.map = hazelcast.getMap(MAP);
        this.state = state;
        this.expiryMillis = expiryMillis;
        this.nodeId = hazelcast.getCluster().getLocalMember().getAttribute(VERTX_NODE_ID);
        this.seals = SealedBytes.of(hazelcast);
    }

    Future<Void> start(long antiEntropyMillis) {
        consumer = vertx.eventBus().consumer(ADDRESS + nodeId, message -> {
            byte[] push = seals.open(PUSHES, nodeId, message.body().getBytes());
            if (push == null) {
                message.fail(401, "unsealed reservation push");
                return;
            }
            try {
                apply(Buffer.buffer(push));
                message.reply("ok");
            } catch (RuntimeException e) {
                LOG.warn("cluster reservations: refused a push: {}", e.toString());
                message.fail(400, "malformed reservation push");
            }
        });
        timer = vertx.setPeriodic(antiEntropyMillis, id -> reconcile());
        return consumer.completion().compose(v -> reconcile());
    }

    void stop() {
        vertx.cancelTimer(timer);
        if (consumer != null) {
            consumer.unregister();
        }
    }

    /** A booking made here: claims its id cluster-wide, or undoes it and fails with 409. */
    Future<Void> booked(String id) {
        ReservationRecord r = state.record(id);
        return here(map.submitToKey(id, new Claim(sealed(r)))).compose(previous -> {
            if (previous != null) {
                state.forget(id, r.incarnation());
                return Future.failedFuture(Refusal.conflict("selection " + id + " is already reserved or being reserved"));
            }
            return push(upsert(r));
        });
    }

    /**
     * Completes a reservation's prefill in the cluster's record, which then replaces every copy; false when the
     * cluster holds no such reservation. Also serves ids this replica has no copy of yet (a push it missed).
     */
    Future<Boolean> prefillCompleted(String id) {
        return changed(id, Advance.prefillDone());
    }

    Future<Boolean> outputBlock(String id, double decayFraction) {
        return changed(id, Advance.outputBlock(decayFraction));
    }

    /** Released here: the record goes, and so does every copy. */
    Future<Void> freed(String id, long incarnation) {
        return here(map.submitToKey(id, new EndIncarnation(incarnation))).compose(v -> push(forget(id, incarnation)));
    }

    /**
     * Releases a reservation this replica has no copy of (its booking's push never arrived, say from a replica that
     * died): false when the cluster does not hold it either.
     */
    Future<Boolean> freeUnseen(String id) {
        return here(map.submitToKey(id, new Take())).compose(stored -> {
            ReservationRecord r = opened(id, stored);
            if (r == null) {
                return Future.succeededFuture(false);
            }
            state.forget(id, r.incarnation());
            return push(forget(id, r.incarnation())).map(true);
        });
    }

    private Future<Boolean> changed(String id, EntryProcessor<String, byte[], byte[]> step) {
        return here(map.submitToKey(id, step)).compose(stored -> {
            ReservationRecord r = opened(id, stored);
            if (r == null) {
                return Future.succeededFuture(false);
            }
            state.upsert(r);
            return push(upsert(r)).map(true);
        });
    }

    private void apply(Buffer b) {
        byte kind = b.getByte(0);
        byte[] payload = b.getBytes(1, b.length());
        if (kind == UPSERT) {
            state.upsert(ReservationRecord.decode(payload));
        } else if (kind == FORGET) {
            long incarnation = b.getLong(1);
            state.forget(new String(b.getBytes(9, b.length()), StandardCharsets.UTF_8), incarnation);
        } else {
            throw new IllegalArgumentException("unknown push kind " + kind);
        }
    }

    /**
     * Sends a change to every other member and waits for each to apply it (or to fail, or time out); each push is
     * sealed to the member it goes to.
     */
    private Future<Void> push(Buffer message) {
        List<Future<?>> acks = new ArrayList<>();
        DeliveryOptions options = new DeliveryOptions().setSendTimeout(PUSH_TIMEOUT_MILLIS);
        byte[] bytes = message.getBytes();
        for (Member m : hazelcast.getCluster().getMembers()) {
            String other = m.getAttribute(VERTX_NODE_ID);
            if (other != null && !other.equals(nodeId)) {
                acks.add(vertx.eventBus().request(ADDRESS + other, Buffer.buffer(seals.seal(PUSHES, other, bytes)),
                        options));
            }
        }
        return here(Future.join(acks).otherwiseEmpty().mapEmpty());
    }

    /**
     * Catches this replica up with the map: every record applied, copies of records gone dropped (only those held
     * since before the pass began, so a booking claimed meanwhile stays), and bookings past their expiry ended.
     */
    private Future<Void> reconcile() {
        long started = state.nowMillis();
        return vertx.<Map<String, byte[]>>executeBlocking(() -> new HashMap<>(map))
                .compose(snapshot -> here(Future.succeededFuture(snapshot)))
                .map(snapshot -> {
                    long now = System.currentTimeMillis();
                    for (Map.Entry<String, byte[]> e : snapshot.entrySet()) {
                        byte[] bytes = seals.open(RECORDS, e.getKey(), e.getValue());
                        if (bytes == null) {
                            map.submitToKey(e.getKey(), new Drop(e.getValue()));
                            continue;
                        }
                        ReservationRecord r;
                        try {
                            r = ReservationRecord.decode(bytes);
                        } catch (IllegalArgumentException ex) {
                            LOG.warn("cluster reservations: dropping an undecodable record {}", e.getKey());
                            map.submitToKey(e.getKey(), new Drop(e.getValue()));
                            continue;
                        }
                        if (now - r.bookedAtMillis() > expiryMillis) {
                            map.submitToKey(e.getKey(), new EndIncarnation(r.incarnation()));
                            state.forget(r.id(), r.incarnation());
                        } else {
                            state.upsert(r);
                        }
                    }
                    for (String id : state.heldBefore(started)) {
                        if (!snapshot.containsKey(id)) {
                            ReservationRecord gone = state.record(id);
                            state.forget(id, gone.incarnation());
                        }
                    }
                    return (Void) null;
                })
                .onFailure(t -> LOG.warn("cluster reservations: anti-entropy pass failed: {}", t.toString()));
    }

    private <T> Future<T> here(CompletionStage<T> stage) {
        return ContextHop.on(home, stage);
    }

    private <T> Future<T> here(Future<T> f) {
        return ContextHop.on(home, f);
    }

    private byte[] sealed(ReservationRecord r) {
        return seals.seal(RECORDS, r.id(), r.encode());
    }

    /** The record stored under {@code id}, or null when there is none or it is refused (counted). */
    private ReservationRecord opened(String id, byte[] stored) {
        byte[] bytes = stored == null ? null : seals.open(RECORDS, id, stored);
        return bytes == null ? null : ReservationRecord.decode(bytes);
    }

    private static Buffer upsert(ReservationRecord r) {
        return Buffer.buffer().appendByte(UPSERT).appendBytes(r.encode());
    }

    private static Buffer forget(String id, long incarnation) {
        return Buffer.buffer().appendByte(FORGET).appendLong(incarnation).appendBytes(id.getBytes(StandardCharsets.UTF_8));
    }

    /** Stores a booking unless the id is taken; returns the record already there, or null. */
    static final class Claim implements EntryProcessor<String, byte[], byte[]> {
        private static final long serialVersionUID = 1L;
        private final byte[] record;

        Claim(byte[] record) {
            this.record = record;
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            if (entry.getValue() != null) {
                return entry.getValue();
            }
            entry.setValue(record);
            return null;
        }
    }

    /** Removes the record if it is still these bytes: a booking claimed since the pass read the map stays. */
    static final class Drop implements EntryProcessor<String, byte[], byte[]> {
        private static final long serialVersionUID = 1L;
        private final byte[] bytes;

        Drop(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            if (Arrays.equals(entry.getValue(), bytes)) {
                entry.setValue(null);
            }
            return null;
        }
    }

    /** Removes the record, returning it (null when there was none). */
    static final class Take implements EntryProcessor<String, byte[], byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            byte[] v = entry.getValue();
            if (v != null) {
                entry.setValue(null);
            }
            return v;
        }
    }

    /**
     * Removes the record if it is still that booking of its id (a later booking of the id stays). Its seal is not
     * checked: removing a forgery is no harm.
     */
    static final class EndIncarnation implements EntryProcessor<String, byte[], byte[]>, HazelcastInstanceAware {
        private static final long serialVersionUID = 1L;
        private final long incarnation;
        private transient SealedBytes seals;

        EndIncarnation(long incarnation) {
            this.incarnation = incarnation;
        }

        @Override
        public void setHazelcastInstance(HazelcastInstance member) {
            seals = SealedBytes.of(member);
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            if (entry.getValue() != null
                    && ReservationRecord.decode(seals.peek(entry.getValue())).incarnation() == incarnation) {
                entry.setValue(null);
            }
            return null;
        }
    }

    /**
     * Advances the stored record's lifecycle: its prefill done, or one more output block. Runs on the map entry's
     * owner, so concurrent steps from different replicas never overwrite each other; the owner checks the stored
     * seal and seals the result with its own token, so a forged record is never advanced into a sealed one.
     */
    static final class Advance implements EntryProcessor<String, byte[], byte[]>, HazelcastInstanceAware {
        private static final long serialVersionUID = 1L;
        private final boolean prefill;
        private final double decayFraction;
        private transient SealedBytes seals;

        private Advance(boolean prefill, double decayFraction) {
            this.prefill = prefill;
            this.decayFraction = decayFraction;
        }

        static Advance prefillDone() {
            return new Advance(true, Double.NaN);
        }

        static Advance outputBlock(double decayFraction) {
            return new Advance(false, decayFraction);
        }

        @Override
        public void setHazelcastInstance(HazelcastInstance member) {
            seals = SealedBytes.of(member);
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            byte[] bytes = entry.getValue() == null ? null : seals.open(RECORDS, entry.getKey(), entry.getValue());
            if (bytes == null) {
                return null;
            }
            ReservationRecord r = ReservationRecord.decode(bytes);
            if (prefill && r.prefillDone()) {
                return entry.getValue();
            }
            byte[] next = seals.seal(RECORDS, entry.getKey(), (prefill ? r.withPrefillDone()
                    : r.withOutputBlock(decayFraction)).encode());
            entry.setValue(next);
            return next;
        }
    }
}
