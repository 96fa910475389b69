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
        Reservation r = ledger.get(e.requestId());
        if (r == null || !r.partition().equals(e.partition())) {
            return false;
        }
        if (e instanceof LoadEvent.PrefillCompleted) {
            ledger.prefillComplete(r);
        } else {
            ledger.release(r);
        }
        return true;
    }

    private boolean hold(LoadEvent.Added a) {
        if (!admits(a.sequenceHashes().length)
                || ledger.holds(a.requestId())
                || roster.load(a.partition(), a.workerId(), a.dpRank()) == null) {
            return false;
        }
        ledger.hold(Reservation.booked(a, System.currentTimeMillis(), random.nextLong()));
        return true;
    }

    /**
     * Brings the local copy of a reservation up to a replica's record: booked when absent (replacing an older booking
     * of the same id), then its prefill, output blocks and decay caught up. A record older than the local copy, of a
     * booking that has ended, or that this replica cannot place changes nothing. Returns whether anything changed.
     */
    public boolean upsert(Reservation r) {
        if (ledger.hasEnded(r.id(), r.incarnation()) || !knows(r.partition(), r.blockSize())) {
            return false;
        }
        Reservation local = ledger.get(r.id());
        if (local != null && local.incarnation() != r.incarnation()) {
            ledger.release(local);
            local = null;
        }
        long version;
        if (local == null) {
            if (!admits(r.sequenceHashes().length) || roster.load(r.partition(), r.workerId(), r.dpRank()) == null) {
                return false;
            }
            local = r.unstarted();
            ledger.hold(local);
            version = 0;
        } else if (r.version() <= local.version()) {
            return false;
        } else {
            version = local.version();
        }
        // Caught up step by step, so the tracker sees each step; the version is the newer of the two, not the steps.
        if (r.prefillDone() && !local.prefillDone()) {
            local = ledger.prefillComplete(local);
        }
        while (local.outputBlocks() < r.outputBlocks()) {
            local = ledger.outputBlock(local, Double.NaN);
        }
        if (!Double.isNaN(r.decay()) && Double.compare(r.decay(), local.decay()) != 0) {
            local = ledger.decay(local, r.decay());
        }
        ledger.replace(local.withVersion(Math.max(version, r.version())));
        return true;
    }

    /** Ends a booking another replica ended (only that incarnation of the id). */
    public boolean forget(String id, long incarnation) {
        Reservation r = ledger.get(id);
        ledger.markEnded(id, incarnation);
        if (r == null || r.incarnation() != incarnation) {
            return false;
        }
        ledger.release(r);
        return true;
    }

    /**
     * Drops a copy the cluster's records did not show, without marking the booking ended: a read of the records while
     * the cluster moves them (a member died) can miss one that lives, and the next read that shows it brings it back.
     */
    public boolean drop(String id, long incarnation) {
        Reservation r = ledger.get(id);
        if (r == null || r.incarnation() != incarnation) {
            return false;
        }
        ledger.release(r);
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
    public Reservation record(String id) {
        return ledger.get(id);
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
