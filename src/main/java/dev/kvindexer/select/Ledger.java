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
    private final Map<String, Held> byId = new HashMap<>();
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

    Held get(String id) {
        return byId.get(id);
    }

    /** Books a reservation: its load goes onto its rank and it joins the held ones. */
    void hold(String id, Held h) {
        tracker.add(h.partition, id, h.workerId, h.dpRank, h.sequenceHashes, h.prefillLoad());
        Held old = byId.put(id, h);
        blocks += h.sequenceHashes.length - (old == null ? 0 : old.sequenceHashes.length);
    }

    /** Ends a reservation: its load leaves its rank. */
    void release(String id, Held h) {
        tracker.free(h.partition, id);
        forget(id);
    }

    /** Drops a reservation whose load has already left the tracker (its rank was unregistered, or it expired). */
    void forget(String id) {
        Held h = byId.remove(id);
        if (h != null) {
            blocks -= h.sequenceHashes.length;
            onEnded.accept(id);
        }
    }

    /** Its prompt was processed: the prefill tokens stop counting. Returns whether that is news. */
    boolean prefillComplete(String id, Held h) {
        tracker.prefillComplete(h.partition, id);
        boolean first = !h.prefillDone;
        h.prefillDone = true;
        return first;
    }

    /** One more output block, with the decay fraction it reports (NaN for none). */
    void outputBlock(String id, Held h, double decayFraction) {
        tracker.outputBlock(h.partition, id, decayFraction);
        h.outputBlocks++;
        if (!Double.isNaN(decayFraction)) {
            h.decay = decayFraction;
        }
    }

    void decay(String id, Held h, double fraction) {
        tracker.decay(h.partition, id, fraction);
        h.decay = fraction;
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

    /** A held reservation's whole state, or null. */
    public ReservationRecord record(String id) {
        Held h = byId.get(id);
        return h == null ? null : h.record(id);
    }

    /** Counts a held reservation as applied now. */
    void restamp(String id) {
        Held h = byId.get(id);
        if (h != null) {
            h.appliedAt = clockMillis.getAsLong();
        }
    }

    /** Ids held here that were booked or mirrored before {@code monotonicMillis}. */
    public List<String> heldBefore(long monotonicMillis) {
        List<String> out = new ArrayList<>();
        byId.forEach((id, h) -> {
            if (h.appliedAt < monotonicMillis) {
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
}
