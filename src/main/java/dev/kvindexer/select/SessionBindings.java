package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Session affinity (docs/api/selection.md#session-affinity): one table per partition binding a session id to the
 * worker rank that served it. A booking holds its session's binding with a lease until its reservation ends; the idle
 * TTL starts when the last lease goes, and a binding idle past it is gone. Bindings carry a version (sequence, then
 * writer) so that replicas exchanging them agree on one: the higher wins wherever it arrives.
 *
 * <p>Single-threaded, as the rest of the selection state: a booking holds, chooses, books and commits in one step, so
 * no other request can see a session half-bound.
 */
public final class SessionBindings {
    public static final long MAX_TTL_SECS = 31_536_000L;
    public static final int MAX_ENTRIES = 65_536;
    public static final int MAX_ID_BYTES = 256;

    /** The order of replicated bindings: the higher sequence wins, a tie goes to the higher writer (both unsigned). */
    public record Version(long sequence, long writerId) implements Comparable<Version> {
        @Override
        public int compareTo(Version o) {
            int c = Long.compareUnsigned(sequence, o.sequence);
            return c != 0 ? c : Long.compareUnsigned(writerId, o.writerId);
        }
    }

    /** One binding as replicas exchange it. */
    public record Binding(PartitionKey partition, String sessionId, AffinityTarget target, Version version) {}

    /** What became of a replica's binding here. */
    public enum Applied {
        INSERTED,
        REFRESHED,
        REPLACED_EXPIRED,
        REPLACED_NEWER,
        IGNORED_CONFLICT,
        /** A catch-up brought a version already held: nothing changes, its idle deadline included. */
        UNCHANGED,
        /** Its worker is not in this partition's catalog here. */
        IGNORED_UNKNOWN_WORKER,
        REJECTED_SESSION_ID,
        REJECTED_CAPACITY
    }

    /** What a booking holds of its session while it is chosen. */
    public sealed interface Hold permits Fresh, Bound, Unpinned {
        /** Where the session steers the choice; null when it does not. */
        AffinityTarget target();
    }

    /** No live binding: the booking binds the session to where it lands. */
    public record Fresh(PartitionKey partition, String sessionId) implements Hold {
        @Override
        public AffinityTarget target() {
            return null;
        }
    }

    /** A live binding: the choice is steered to it and the booking takes a lease on it. */
    public record Bound(PartitionKey partition, String sessionId, AffinityTarget target, long revision)
            implements Hold {}

    /** The partition's table is full: the request is routed as if it had no session, and binds nothing. */
    public record Unpinned() implements Hold {
        @Override
        public AffinityTarget target() {
            return null;
        }
    }

    private static final class Entry {
        AffinityTarget target;
        Version version;
        /** Changes when the session is bound anew, so a lease of an earlier binding leaves this one alone. */
        final long revision;

        int leases;
        long idleDeadline;

        Entry(AffinityTarget target, Version version, long revision, int leases, long idleDeadline) {
            this.target = target;
            this.version = version;
            this.revision = revision;
            this.leases = leases;
            this.idleDeadline = idleDeadline;
        }
    }

    private record Lease(PartitionKey partition, String sessionId, long revision, Version version) {}

    private final long ttlMillis;
    private final int maxEntries;
    private final LongSupplier clockMillis;
    private final BiPredicate<PartitionKey, AffinityTarget> schedulable;
    private final BiPredicate<PartitionKey, AffinityTarget> catalogued;
    private final Map<PartitionKey, Map<String, Entry>> tables = new HashMap<>();
    /** Reservation id → the lease its booking holds. */
    private final Map<String, Lease> leases = new HashMap<>();

    private long nextSequence;
    private long writerId;
    private long nextRevision = 1;
    private Consumer<Binding> sink = b -> {};

    /**
     * @param clockMillis   a monotonic clock
     * @param firstSequence where this table's versions start; the wall clock in nanoseconds, so a restarted replica's
     *                      bindings outrank its earlier ones
     * @param schedulable   whether a target's worker (and rank) can be chosen in a partition now
     * @param catalogued    whether a target's worker is in a partition's catalog, whatever its state: a replica's
     *                      binding to one is kept (a booking drops it while it cannot be chosen)
     */
    public SessionBindings(
            long ttlMillis,
            int maxEntries,
            LongSupplier clockMillis,
            long firstSequence,
            BiPredicate<PartitionKey, AffinityTarget> schedulable,
            BiPredicate<PartitionKey, AffinityTarget> catalogued) {
        this.ttlMillis = ttlMillis;
        this.maxEntries = maxEntries;
        this.clockMillis = clockMillis;
        this.nextSequence = firstSequence;
        this.schedulable = schedulable;
        this.catalogued = catalogued;
    }

    /** The TTL a flag gives, in seconds; out of Dynamo's range is refused. */
    public static long ttlMillis(long seconds) {
        if (seconds < 1 || seconds > MAX_TTL_SECS) {
            throw new IllegalArgumentException(
                    "session affinity TTL must be between 1 and " + MAX_TTL_SECS + " seconds");
        }
        return seconds * 1000;
    }

    /** Every binding made or refreshed here goes to {@code sink}, versioned as {@code writerId}'s. */
    public void replicate(long writerId, Consumer<Binding> sink) {
        this.writerId = writerId;
        this.sink = sink;
    }

    /** Refuses a session id over {@link #MAX_ID_BYTES} bytes (400); nothing changes. */
    public static void validate(String sessionId) {
        if (tooLong(sessionId)) {
            throw Refusal.badRequest("session affinity ID must not exceed " + MAX_ID_BYTES + " bytes");
        }
    }

    /** The session's live binding, or null: what {@code /select} steers by. Takes no lease and binds nothing. */
    public AffinityTarget bound(PartitionKey p, String sessionId) {
        validate(sessionId);
        Entry e = entry(p, sessionId);
        return e == null || idle(e, now()) ? null : e.target;
    }

    /**
     * Holds a session for a booking. A binding idle past its TTL, or whose worker rank can no longer be chosen, is
     * dropped and the session is bound anew.
     */
    Hold hold(PartitionKey p, String sessionId) {
        validate(sessionId);
        Entry e = entry(p, sessionId);
        if (e != null && (idle(e, now()) || !schedulable.test(p, e.target))) {
            tables.get(p).remove(sessionId);
            e = null;
        }
        if (e != null) {
            return new Bound(p, sessionId, e.target, e.revision);
        }
        return hasRoom(p) ? new Fresh(p, sessionId) : new Unpinned();
    }

    /**
     * Refuses (400) a booking of a bound session on another worker or rank than its binding's, before anything is
     * booked: a binding is exact (Dynamo's hard mode). It happens when the request's own restrictions exclude the
     * bound worker. As in Dynamo, the binding is dropped with the refusal, so the session's next booking binds anew.
     */
    void check(Hold h, long workerId, int dpRank) {
        if (!(h instanceof Bound b)) {
            return;
        }
        AffinityTarget t = b.target();
        String refusal = null;
        if (t.workerId() != workerId) {
            refusal = "session " + b.sessionId() + " is bound to worker " + Long.toUnsignedString(t.workerId())
                    + ", not " + Long.toUnsignedString(workerId);
        } else if (t.dpRank() != null && t.dpRank() != dpRank) {
            refusal = "session " + b.sessionId() + " is bound to DP rank " + t.dpRank() + ", not " + dpRank;
        }
        if (refusal != null) {
            Entry e = entry(b.partition(), b.sessionId());
            if (e != null && e.revision == b.revision()) {
                tables.get(b.partition()).remove(b.sessionId());
            }
            throw Refusal.badRequest(refusal);
        }
    }

    /** The booking under {@code reservationId} landed on this rank: a fresh session is bound there; both lease it. */
    void commit(Hold h, long workerId, int dpRank, String reservationId) {
        if (h instanceof Fresh f) {
            Entry e = new Entry(
                    new AffinityTarget(workerId, dpRank), nextVersion(), nextRevision++, 1, now() + ttlMillis);
            tables.computeIfAbsent(f.partition(), k -> new HashMap<>()).put(f.sessionId(), e);
            lease(reservationId, f.partition(), f.sessionId(), e);
        } else if (h instanceof Bound b) {
            Entry e = entry(b.partition(), b.sessionId());
            if (e != null && e.revision == b.revision()) {
                e.leases++;
                lease(reservationId, b.partition(), b.sessionId(), e);
            }
        }
    }

    private void lease(String reservationId, PartitionKey p, String sessionId, Entry e) {
        leases.put(reservationId, new Lease(p, sessionId, e.revision, e.version));
        publish(p, sessionId, e);
    }

    /**
     * A reservation ended: its lease goes, and the binding's idle TTL starts over. A binding that a replica's newer one
     * replaced meanwhile keeps that one's timing.
     */
    void released(String reservationId) {
        Lease l = leases.remove(reservationId);
        if (l == null) {
            return;
        }
        Entry e = entry(l.partition(), l.sessionId());
        if (e == null || e.revision != l.revision() || e.leases == 0) {
            return;
        }
        e.leases--;
        if (!e.version.equals(l.version())) {
            return;
        }
        e.idleDeadline = now() + ttlMillis;
        publish(l.partition(), l.sessionId(), e);
    }

    /** Applies a replica's binding: inserted, refreshed or replaced when its version wins; otherwise left. */
    public Applied apply(Binding b) {
        if (tooLong(b.sessionId())) {
            return Applied.REJECTED_SESSION_ID;
        }
        observe(b.version().sequence());
        if (!catalogued.test(b.partition(), b.target())) {
            return Applied.IGNORED_UNKNOWN_WORKER;
        }
        long now = now();
        Entry e = entry(b.partition(), b.sessionId());
        if (e == null) {
            if (!hasRoom(b.partition())) {
                return Applied.REJECTED_CAPACITY;
            }
            put(b, now);
            return Applied.INSERTED;
        }
        if (idle(e, now)) {
            put(b, now);
            return Applied.REPLACED_EXPIRED;
        }
        int order = b.version().compareTo(e.version);
        if (e.target.equals(b.target()) && order >= 0) {
            e.version = b.version();
            e.idleDeadline = now + ttlMillis;
            return Applied.REFRESHED;
        }
        if (order > 0) {
            e.target = b.target();
            e.version = b.version();
            e.idleDeadline = now + ttlMillis;
            return Applied.REPLACED_NEWER;
        }
        return Applied.IGNORED_CONFLICT;
    }

    /**
     * Applies a binding read back from a shared record rather than sent: one already held at that version or newer
     * changes nothing, so re-reading the record does not keep an idle binding alive.
     */
    public Applied catchUp(Binding b) {
        Entry e = entry(b.partition(), b.sessionId());
        if (e != null && !idle(e, now()) && b.version().compareTo(e.version) <= 0) {
            return Applied.UNCHANGED;
        }
        return apply(b);
    }

    private void put(Binding b, long now) {
        tables.computeIfAbsent(b.partition(), k -> new HashMap<>())
                .put(b.sessionId(), new Entry(b.target(), b.version(), nextRevision++, 0, now + ttlMillis));
    }

    /** Drops every binding idle past its TTL; returns how many. */
    public int expireIdle() {
        long now = now();
        int removed = 0;
        for (Iterator<Map<String, Entry>> tablesLeft = tables.values().iterator(); tablesLeft.hasNext(); ) {
            Map<String, Entry> t = tablesLeft.next();
            removed += sweep(t, now);
            if (t.isEmpty()) {
                tablesLeft.remove();
            }
        }
        return removed;
    }

    /** Bindings held, idle ones not yet swept included. */
    public int size() {
        int n = 0;
        for (Map<String, Entry> t : tables.values()) {
            n += t.size();
        }
        return n;
    }

    /** Leases held by reservations of this replica's. */
    public int leases() {
        return leases.size();
    }

    private boolean hasRoom(PartitionKey p) {
        Map<String, Entry> t = tables.get(p);
        return t == null || t.size() < maxEntries || sweep(t, now()) > 0;
    }

    private int sweep(Map<String, Entry> t, long now) {
        int before = t.size();
        t.values().removeIf(e -> idle(e, now));
        return before - t.size();
    }

    private Entry entry(PartitionKey p, String sessionId) {
        Map<String, Entry> t = tables.get(p);
        return t == null ? null : t.get(sessionId);
    }

    private static boolean idle(Entry e, long now) {
        return e.leases == 0 && e.idleDeadline <= now;
    }

    private Version nextVersion() {
        return new Version(nextSequence++, writerId);
    }

    /** A replica wrote this sequence: this table's next binding outranks it. */
    private void observe(long sequence) {
        if (sequence != -1L && Long.compareUnsigned(sequence + 1, nextSequence) > 0) {
            nextSequence = sequence + 1;
        }
    }

    private void publish(PartitionKey p, String sessionId, Entry e) {
        sink.accept(new Binding(p, sessionId, e.target, e.version));
    }

    private long now() {
        return clockMillis.getAsLong();
    }

    /** Over the byte limit; a string of more chars than that is, without encoding it. */
    private static boolean tooLong(String s) {
        return s.length() > MAX_ID_BYTES || s.getBytes(StandardCharsets.UTF_8).length > MAX_ID_BYTES;
    }
}
