package dev.kvindexer.select;

import dev.kvindexer.load.SlotTracker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The held reservations, local and mirrored, and the load each puts on its rank: ids are unique across partitions,
 * and the blocks all of them hold together are bounded, so every booking asks {@link #admits} first. It also
 * remembers which bookings ended, so that a late copy of one is not taken for a new booking of its id.
 */
public final class Ledger {
    private static final long ENDED_KEPT_MILLIS = 600_000;

    private final SlotTracker tracker;
    private final LongSupplier clockMillis;
    private final Map<String, Slot> byId = new HashMap<>();
    /** Id → {incarnation, when it ended}, oldest first. */
    private final LinkedHashMap<String, long[]> ended = new LinkedHashMap<>();

    private Consumer<String> onEnded = id -> {};

    private final int maxBookingBlocks;
    private final long maxBlocks;
    private long blocks;

    Ledger(SlotTracker tracker, LongSupplier clockMillis, int maxBookingBlocks, long maxBlocks) {
        this.tracker = tracker;
        this.clockMillis = clockMillis;
        this.maxBookingBlocks = maxBookingBlocks;
        this.maxBlocks = maxBlocks;
    }

    /** Told the id of every reservation that leaves, however it goes (released, expired, ended elsewhere). */
    void onEnded(Consumer<String> sink) {
        this.onEnded = sink;
    }

    int maxBookingBlocks() {
        return maxBookingBlocks;
    }

    /** Whether one booking of this many blocks is within the per-booking bound. */
    boolean withinBookingLimit(int more) {
        return more <= maxBookingBlocks;
    }

    /** Whether this many more blocks fit beside those held. */
    boolean admits(int more) {
        return blocks + more <= maxBlocks;
    }

    boolean holds(String id) {
        return byId.containsKey(id);
    }

    /** A held reservation, or null. */
    Reservation get(String id) {
        Slot s = byId.get(id);
        return s == null ? null : s.reservation;
    }

    /** Books a reservation: its load goes onto its rank and it joins the held ones, as applied now. */
    void hold(Reservation r) {
        tracker.add(r.partition(), r.id(), r.workerId(), r.dpRank(), r.sequenceHashes(), r.prefillLoad());
        Slot old = byId.put(r.id(), new Slot(r, clockMillis.getAsLong()));
        blocks += r.sequenceHashes().length - (old == null ? 0 : old.reservation.sequenceHashes().length);
    }

    /** Ends a reservation: its load leaves its rank. */
    void release(Reservation r) {
        tracker.free(r.partition(), r.id());
        forget(r.id());
    }

    /** Drops a reservation whose load has already left the tracker (its rank was unregistered, or it expired). */
    void forget(String id) {
        Slot s = byId.remove(id);
        if (s != null) {
            blocks -= s.reservation.sequenceHashes().length;
            onEnded.accept(id);
        }
    }

    /**
     * Its prompt was processed: the prefill tokens stop counting, and the first time is a step of its lifecycle.
     * Returns the reservation as it is now.
     */
    Reservation prefillComplete(Reservation r) {
        tracker.prefillComplete(r.partition(), r.id());
        return r.prefillDone() ? r : replace(r.withPrefillDone());
    }

    /** One more output block, with the decay fraction it reports (NaN for none). */
    Reservation outputBlock(Reservation r, double decayFraction) {
        tracker.outputBlock(r.partition(), r.id(), decayFraction);
        return replace(r.withOutputBlock(decayFraction));
    }

    Reservation decay(Reservation r, double fraction) {
        tracker.decay(r.partition(), r.id(), fraction);
        return replace(r.withDecay(fraction));
    }

    /** A held reservation's new state; its load on the tracker is the caller's to have changed. */
    Reservation replace(Reservation r) {
        byId.get(r.id()).reservation = r;
        return r;
    }

    /** Remembers that this booking of the id has ended, forgetting bookings that ended long ago. */
    void markEnded(String id, long incarnation) {
        long now = clockMillis.getAsLong();
        Iterator<long[]> it = ended.values().iterator();
        while (it.hasNext() && it.next()[1] < now - ENDED_KEPT_MILLIS) {
            it.remove();
        }
        ended.put(id, new long[] {incarnation, now});
    }

    /** Whether this booking of the id has ended here. */
    boolean hasEnded(String id, long incarnation) {
        long[] end = ended.get(id);
        return end != null && end[0] == incarnation;
    }

    /** Drops reservations older than the expiry; not published (docs/api/selection.md#reservation-lifecycle). Returns how many. */
    public int expireStale() {
        return tracker.expireStale(this::forget);
    }

    /** Counts a held reservation as applied now. */
    void restamp(String id) {
        Slot s = byId.get(id);
        if (s != null) {
            s.appliedAt = clockMillis.getAsLong();
        }
    }

    /** Ids held here that were booked or mirrored before {@code monotonicMillis}. */
    public List<String> heldBefore(long monotonicMillis) {
        List<String> out = new ArrayList<>();
        byId.forEach((id, s) -> {
            if (s.appliedAt < monotonicMillis) {
                out.add(id);
            }
        });
        return out;
    }

    public int size() {
        return byId.size();
    }

    /** Blocks the held reservations hold together. */
    public long blocks() {
        return blocks;
    }

    /**
     * A held reservation and when it was booked or mirrored here, on the monotonic clock (for a booking of this
     * replica's own, when its cluster-wide claim completed): that instant is this replica's alone.
     */
    private static final class Slot {
        Reservation reservation;
        long appliedAt;

        Slot(Reservation reservation, long appliedAt) {
            this.reservation = reservation;
            this.appliedAt = appliedAt;
        }
    }
}
