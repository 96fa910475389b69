package dev.kvindexer.selectservice.replication;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import dev.kvindexer.cluster.MemberChannel;
import dev.kvindexer.cluster.SealedBytes;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.select.Bookings;
import dev.kvindexer.select.Mirror;
import dev.kvindexer.select.Reservation;
import dev.kvindexer.web.ContextHop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
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
public final class ClusterLoad implements SharedReservations {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterLoad.class);
    public static final String MAP = "kvindexer.select.reservations";
    public static final String ADDRESS = "kvindexer.select.load.";
    private static final byte UPSERT = 1;
    private static final byte FORGET = 2;
    /** Seal kinds (and the rejection counter's sources): records in the map, pushes to a member. */
    public static final String RECORDS = "reservations";

    public static final String PUSHES = "reservation_pushes";

    private final Vertx vertx;
    private final Context home;
    private final HazelcastInstance hazelcast;
    private final IMap<String, byte[]> map;
    private final Mirror mirror;
    private final Bookings bookings;
    private final long expiryMillis;
    private final SealedBytes seals;
    private final MemberChannel pushes;
    /** This replica's bookings whose claim in the map is under way: a catch-up pass must not take them for gone. */
    private final Set<String> claiming = new HashSet<>();

    private final Spans spans;
    private MessageConsumer<Buffer> consumer;
    private long timer = -1;

    /** Call on the service's context: pushes from other members are applied there. */
    public ClusterLoad(
            Vertx vertx,
            Context home,
            HazelcastInstance hazelcast,
            Spans spans,
            Mirror mirror,
            Bookings bookings,
            long expiryMillis) {
        this.vertx = vertx;
        this.home = home;
        this.hazelcast = hazelcast;
        this.map = hazelcast.getMap(MAP);
        this.mirror = mirror;
        this.bookings = bookings;
        this.expiryMillis = expiryMillis;
        this.seals = SealedBytes.of(hazelcast);
        this.spans = spans;
        this.pushes =
                new MemberChannel(vertx, hazelcast, ADDRESS, PUSHES, MemberChannel.TIMEOUT, spans, "reservation.peer");
    }

    public Future<Void> start(long antiEntropyMillis) {
        consumer = pushes.listen(MemberChannel.applying(push -> apply(Buffer.buffer(push))), LOG, "reservation push");
        timer = vertx.setPeriodic(antiEntropyMillis, id -> reconcile());
        return consumer.completion().compose(v -> reconcile());
    }

    @Override
    public void stop() {
        vertx.cancelTimer(timer);
        if (consumer != null) {
            consumer.unregister();
        }
    }

    /** A booking made here: claims its id cluster-wide, or undoes it and fails with 409. */
    @Override
    public Future<Void> booked(String id) {
        Reservation r = mirror.record(id);
        claiming.add(id);
        // the claim comes back on the service's own context: the pushes continue the request's trace from there
        Spans.Parent request = spans.parent();
        var claim = spans.around(
                "reservation.claim",
                t -> t.put("kvindexer.selection_id", id),
                () -> here(map.submitToKey(id, new RecordSteps.Claim(sealed(r)))));
        return claim.onComplete(done -> claiming.remove(id)).compose(previous -> {
            if (previous == null) {
                mirror.claimed(id);
            } else {
                mirror.forget(id, r.incarnation());
                return Future.failedFuture(
                        Refusal.conflict("selection " + id + " is already reserved or being reserved"));
            }
            return request.within(() -> push(upsert(r)));
        });
    }

    @Override
    public Future<Void> prefillComplete(String id) {
        return advance(id, () -> bookings.prefillComplete(id), RecordSteps.Advance.prefillDone());
    }

    @Override
    public Future<Void> outputBlock(String id, double decayFraction) {
        return advance(
                id, () -> bookings.outputBlock(id, decayFraction), RecordSteps.Advance.outputBlock(decayFraction));
    }

    /**
     * Released here, then the record goes and so does every copy. A reservation this replica has no copy of (its
     * booking's push never arrived, say from a replica that died) is released from the cluster's record.
     */
    @Override
    public Future<Void> free(String id) {
        Reservation held = mirror.record(id);
        if (held == null) {
            return foundOrRefused(id, freeUnseen(id));
        }
        bookings.free(id);
        return here(map.submitToKey(id, new RecordSteps.EndIncarnation(held.incarnation())))
                .compose(v -> push(forget(id, held.incarnation())));
    }

    /**
     * A lifecycle step applied here, then to the cluster's record, which then replaces every copy. An id this replica
     * has no copy of yet (a push it missed) is advanced in the cluster alone, and is a 404 when the cluster lacks it.
     */
    private Future<Void> advance(String id, Runnable local, EntryProcessor<String, byte[], byte[]> step) {
        if (mirror.record(id) == null) {
            return foundOrRefused(id, changed(id, step));
        }
        local.run();
        return changed(id, step).mapEmpty();
    }

    private static Future<Void> foundOrRefused(String id, Future<Boolean> found) {
        return found.map(yes -> {
            if (!yes) {
                throw Refusal.notFound("reservation " + id + " not found");
            }
            return null;
        });
    }

    /** Releases a reservation this replica has no copy of: false when the cluster does not hold it either. */
    private Future<Boolean> freeUnseen(String id) {
        return here(map.submitToKey(id, new RecordSteps.Take())).compose(stored -> {
            Reservation r = opened(id, stored);
            if (r == null) {
                return Future.succeededFuture(false);
            }
            mirror.forget(id, r.incarnation());
            return push(forget(id, r.incarnation())).map(true);
        });
    }

    private Future<Boolean> changed(String id, EntryProcessor<String, byte[], byte[]> step) {
        return here(map.submitToKey(id, step)).compose(stored -> {
            Reservation r = opened(id, stored);
            if (r == null) {
                return Future.succeededFuture(false);
            }
            mirror.upsert(r);
            return push(upsert(r)).map(true);
        });
    }

    private void apply(Buffer b) {
        byte kind = b.getByte(0);
        byte[] payload = b.getBytes(1, b.length());
        if (kind == UPSERT) {
            mirror.upsert(Reservation.decode(payload));
        } else if (kind == FORGET) {
            long incarnation = b.getLong(1);
            mirror.forget(new String(b.getBytes(9, b.length()), StandardCharsets.UTF_8), incarnation);
        } else {
            throw new IllegalArgumentException("unknown push kind " + kind);
        }
    }

    private Future<Void> push(Buffer message) {
        return ContextHop.on(home, pushes.toAll(message.getBytes()).<Void>mapEmpty());
    }

    /**
     * Catches this replica up with the map: every record applied, copies of records gone dropped (only those held
     * since before the pass began, so a booking claimed meanwhile stays), and bookings past their expiry ended.
     */
    private Future<Void> reconcile() {
        long started = mirror.nowMillis();
        return vertx.<Map<String, byte[]>>executeBlocking(() -> new HashMap<>(map))
                .compose(snapshot -> here(Future.succeededFuture(snapshot)))
                .map(snapshot -> {
                    long now = System.currentTimeMillis();
                    for (Map.Entry<String, byte[]> e : snapshot.entrySet()) {
                        byte[] bytes = seals.open(RECORDS, e.getKey(), e.getValue());
                        if (bytes == null) {
                            map.submitToKey(e.getKey(), new RecordSteps.Drop(e.getValue()));
                            continue;
                        }
                        Reservation r;
                        try {
                            r = Reservation.decode(bytes);
                        } catch (IllegalArgumentException ex) {
                            LOG.warn("cluster reservations: dropping an undecodable record {}", e.getKey());
                            map.submitToKey(e.getKey(), new RecordSteps.Drop(e.getValue()));
                            continue;
                        }
                        if (now - r.bookedAtMillis() > expiryMillis) {
                            map.submitToKey(e.getKey(), new RecordSteps.EndIncarnation(r.incarnation()));
                            mirror.forget(r.id(), r.incarnation());
                        } else {
                            mirror.upsert(r);
                        }
                    }
                    for (String id : mirror.heldBefore(started)) {
                        if (!snapshot.containsKey(id) && !claiming.contains(id)) {
                            // Not forgotten for good: a copy of the map taken while a dead member's partitions move
                            // can miss a record that lives.
                            Reservation gone = mirror.record(id);
                            mirror.drop(id, gone.incarnation());
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

    private byte[] sealed(Reservation r) {
        return seals.seal(RECORDS, r.id(), r.encode());
    }

    /** The record stored under {@code id}, or null when there is none or it is refused (counted). */
    private Reservation opened(String id, byte[] stored) {
        byte[] bytes = stored == null ? null : seals.open(RECORDS, id, stored);
        return bytes == null ? null : Reservation.decode(bytes);
    }

    private static Buffer upsert(Reservation r) {
        return Buffer.buffer().appendByte(UPSERT).appendBytes(r.encode());
    }

    private static Buffer forget(String id, long incarnation) {
        return Buffer.buffer()
                .appendByte(FORGET)
                .appendLong(incarnation)
                .appendBytes(id.getBytes(StandardCharsets.UTF_8));
    }
}
