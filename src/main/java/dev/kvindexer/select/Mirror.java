package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.load.LoadEvent;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * Other replicas' bookings applied to the local load (docs/api/selection.md#replica-sync), as events or as whole records, with nothing
 * published back. What this replica cannot place (an unknown partition, another block size, an unregistered rank)
 * is dropped, and a booking over either bound is dropped and counted.
 */
public final class Mirror {
    private final LongSupplier clockMillis;
    private final RandomGenerator random;
    private final Roster roster;
    private final Ledger ledger;
    private long refused;

    Mirror(LongSupplier clockMillis, RandomGenerator random, Roster roster, Ledger ledger) {
        this.clockMillis = clockMillis;
        this.random = random;
        this.roster = roster;
        this.ledger = ledger;
    }

    /**
     * Applies a peer replica's event: a booking of an id already held is ignored. Returns whether the event changed
     * anything.
     */
    public boolean apply(LoadEvent e) {
        if (!knows(e.partition(), e.blockSize())) {
            return false;
        }
        if (e instanceof LoadEvent.Added a) {
            return hold(a);
        }
        Held h = ledger.get(e.requestId());
        if (h == null || !h.partition.equals(e.partition())) {
            return false;
        }
        if (e instanceof LoadEvent.PrefillCompleted) {
            ledger.prefillComplete(e.requestId(), h);
        } else {
            ledger.release(e.requestId(), h);
        }
        return true;
    }

    private boolean hold(LoadEvent.Added a) {
        if (!admits(a.sequenceHashes().length)
                || ledger.holds(a.requestId())
                || roster.load(a.partition(), a.workerId(), a.dpRank()) == null) {
            return false;
        }
        ledger.hold(
                a.requestId(),
                new Held(
                        a.partition(),
                        a.blockSize(),
                        a.workerId(),
                        a.dpRank(),
                        a.loraName(),
                        a.sequenceHashes(),
                        a.prefillHint(),
                        a.trackPrefill(),
                        a.expectedOutputTokens(),
                        System.currentTimeMillis(),
                        random.nextLong(),
                        clockMillis.getAsLong()));
        return true;
    }

    /**
     * Brings the local copy of a reservation up to a replica's record: booked when absent (replacing an older booking
     * of the same id), then its prefill, output blocks and decay caught up. A record older than the local copy, of a
     * booking that has ended, or that this replica cannot place changes nothing. Returns whether anything changed.
     */
    public boolean upsert(ReservationRecord r) {
        if (ledger.hasEnded(r.id(), r.incarnation()) || !knows(r.partition(), r.blockSize())) {
            return false;
        }
        Held h = ledger.get(r.id());
        if (h != null && h.incarnation != r.incarnation()) {
            ledger.release(r.id(), h);
            h = null;
        }
        if (h == null) {
            if (!admits(r.sequenceHashes().length) || roster.load(r.partition(), r.workerId(), r.dpRank()) == null) {
                return false;
            }
            h = new Held(
                    r.partition(),
                    r.blockSize(),
                    r.workerId(),
                    r.dpRank(),
                    r.loraName(),
                    r.sequenceHashes(),
                    r.prefillHint(),
                    r.trackPrefill(),
                    r.expectedOutputTokens(),
                    r.bookedAtMillis(),
                    r.incarnation(),
                    clockMillis.getAsLong());
            h.version = 0;
            ledger.hold(r.id(), h);
        } else if (r.version() <= h.version) {
            return false;
        }
        if (r.prefillDone() && !h.prefillDone) {
            ledger.prefillComplete(r.id(), h);
        }
        while (h.outputBlocks < r.outputBlocks()) {
            ledger.outputBlock(r.id(), h, Double.NaN);
        }
        if (!Double.isNaN(r.decay()) && Double.compare(r.decay(), h.decay) != 0) {
            ledger.decay(r.id(), h, r.decay());
        }
        h.version = Math.max(h.version, r.version());
        return true;
    }

    /** Ends a booking another replica ended (only that incarnation of the id). */
    public boolean forget(String id, long incarnation) {
        Held h = ledger.get(id);
        ledger.markEnded(id, incarnation);
        if (h == null || h.incarnation != incarnation) {
            return false;
        }
        ledger.release(id, h);
        return true;
    }

    /**
     * Drops a copy the cluster's records did not show, without marking the booking ended: a read of the records while
     * the cluster moves them (a member died) can miss one that lives, and the next read that shows it brings it back.
     */
    public boolean drop(String id, long incarnation) {
        Held h = ledger.get(id);
        if (h == null || h.incarnation != incarnation) {
            return false;
        }
        ledger.release(id, h);
        return true;
    }

    /**
     * A booking of this replica's own whose cluster-wide claim has just completed: a catch-up pass that began before
     * may have read the cluster's records without it, so it counts as held from now, not from its booking.
     */
    public void claimed(String id) {
        ledger.restamp(id);
    }

    /** A held reservation's whole state, or null. */
    public ReservationRecord record(String id) {
        return ledger.record(id);
    }

    /** Ids held here that were booked or mirrored before {@code monotonicMillis}. */
    public List<String> heldBefore(long monotonicMillis) {
        return ledger.heldBefore(monotonicMillis);
    }

    public long nowMillis() {
        return clockMillis.getAsLong();
    }

    /** Replicas' bookings dropped because they were over a bound. */
    public long refusedBookings() {
        return refused;
    }

    private boolean knows(PartitionKey p, int blockSize) {
        PartitionInfo info = roster.partition(p);
        return info != null && info.blockSize() == blockSize;
    }

    /** Whether a replica's booking of {@code blocks} fits both bounds; one that does not is counted and dropped. */
    private boolean admits(int blocks) {
        if (ledger.withinBookingLimit(blocks) && ledger.admits(blocks)) {
            return true;
        }
        refused++;
        return false;
    }
}
