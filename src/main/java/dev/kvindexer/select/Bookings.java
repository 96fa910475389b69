package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.load.LoadEvent;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * This replica's selections and reservations (docs/api/selection.md#post-select, docs/api/selection.md#post-reservations): a choice remembered for a replay, a booking
 * by choice, replay or naming the rank, and each booking's lifecycle to its release. Refusals throw {@link Refusal}
 * and change nothing; every booking, completed prefill and release goes to the event sink for the replicas.
 */
public final class Bookings {
    private final SelectionConfig config;
    private final LongSupplier clockMillis;
    private final RandomGenerator random;
    private final PendingSelections pending;
    private final Roster roster;
    private final Chooser chooser;
    private final Ledger ledger;
    /** Null when session affinity is off: then sessions steer nothing (a request's own affinity target still does). */
    private final SessionBindings sessions;

    private Consumer<LoadEvent> events = e -> {};

    Bookings(
            SelectionConfig config,
            LongSupplier clockMillis,
            RandomGenerator random,
            PendingSelections pending,
            Roster roster,
            Chooser chooser,
            Ledger ledger,
            SessionBindings sessions) {
        this.config = config;
        this.clockMillis = clockMillis;
        this.random = random;
        this.pending = pending;
        this.roster = roster;
        this.chooser = chooser;
        this.ledger = ledger;
        this.sessions = sessions;
    }

    /** Where bookings, completed prefills and releases go (the replica publisher). */
    public void onEvent(Consumer<LoadEvent> sink) {
        this.events = sink;
    }

    /** {@code POST /select}: chooses a rank and books nothing; with a selection id the choice waits for a replay. */
    public Choice select(PartitionKey p, Prompt prompt, RankOverlaps overlaps, SelectionOptions o) {
        String session = sessions == null ? null : o.steeringSession();
        AffinityTarget steer = o.affinityTarget();
        if (session != null) {
            // A selection that books nothing follows a live binding but never makes one.
            steer = sessions.bound(p, session);
        }
        Choice c = chooser.choose(p, prompt, overlaps, o, steer);
        if (o.selectionId() != null) {
            pending.put(
                    p,
                    o.selectionId(),
                    new PendingSelections.Pending(
                            c.worker().workerId(),
                            c.dpRank(),
                            prompt.blockHashes(),
                            prompt.sequenceHashes(),
                            prompt.isl(),
                            c.effectivePrefill(),
                            o.expectedOutputTokens(),
                            o.loraName(),
                            c.trackPrefill(),
                            session),
                    clockMillis.getAsLong());
        }
        return c;
    }

    /** {@code POST /select_and_reserve}: chooses and books in one step; an absent id becomes a random UUID. */
    public Choice selectAndReserve(PartitionKey p, Prompt prompt, RankOverlaps overlaps, SelectionOptions o) {
        String id =
                o.selectionId() != null ? o.selectionId() : UUID.randomUUID().toString();
        String session = sessions == null ? null : o.steeringSession();
        SessionBindings.Hold hold = session == null ? null : sessions.hold(p, session);
        AffinityTarget steer = hold != null ? hold.target() : o.affinityTarget();
        Choice c = chooser.choose(p, prompt, overlaps, o, steer);
        requireFree(id);
        if (hold != null) {
            sessions.check(hold, c.worker().workerId(), c.dpRank());
        }
        book(
                p,
                id,
                c.worker().workerId(),
                c.dpRank(),
                prompt.sequenceHashes(),
                c.trackPrefill() ? c.effectivePrefill() : 0,
                c.trackPrefill(),
                o.expectedOutputTokens(),
                o.loraName());
        if (hold != null) {
            sessions.commit(hold, c.worker().workerId(), c.dpRank(), id);
        }
        return c.withId(id);
    }

    /** {@code POST /reservations} by replay of a pending selection (docs/api/selection.md#replay-of-a-pending-selection). */
    public Booking reserveReplay(PartitionKey p, String id) {
        PendingSelections.Pending e = pending.peek(p, id, clockMillis.getAsLong());
        if (e == null) {
            throw Refusal.notFound(
                    "no pending selection " + id + " for " + p + " (expired, already used, or never selected)");
        }
        roster.requireReady(p);
        WorkerEntry w = roster.schedulable(e.workerId(), p);
        if (w == null || !w.hasRank(e.dpRank())) {
            throw Refusal.notFound("schedulable worker " + Long.toUnsignedString(e.workerId()) + " (dp_rank "
                    + e.dpRank() + ") not found for " + p);
        }
        requireFree(id);
        SessionBindings.Hold hold = sessions == null || e.sessionId() == null ? null : sessions.hold(p, e.sessionId());
        if (hold != null) {
            try {
                sessions.check(hold, e.workerId(), e.dpRank());
            } catch (Refusal moved) {
                // The session is bound elsewhere now: this selection can never be booked for it.
                pending.remove(p, id);
                throw moved;
            }
        }
        book(
                p,
                id,
                e.workerId(),
                e.dpRank(),
                e.sequenceHashes(),
                e.trackPrefill() ? e.effectivePrefill() : 0,
                e.trackPrefill(),
                e.expectedOutputTokens(),
                e.loraName());
        if (hold != null) {
            sessions.commit(hold, e.workerId(), e.dpRank(), id);
        }
        pending.remove(p, id);
        return new Booking(id, p, w, e.dpRank(), new Prompt(e.blockHashes(), e.sequenceHashes(), e.isl()));
    }

    /**
     * {@code POST /reservations} naming the rank (docs/api/selection.md#explicit-booking). The caller has checked readiness and normalized the
     * prompt; {@code effectivePrefill} and {@code trackPrefill} are null when absent.
     */
    public Booking reserveExplicit(
            PartitionKey p,
            String id,
            long workerId,
            int dpRank,
            Prompt prompt,
            Long effectivePrefill,
            Boolean trackPrefill,
            ConfigOverride override,
            Long expectedOutputTokens,
            String loraName) {
        if (effectivePrefill != null && effectivePrefill > prompt.isl()) {
            throw Refusal.badRequest("effective_prefill_tokens (" + effectivePrefill + ") must not exceed isl_tokens ("
                    + prompt.isl() + ")");
        }
        pending.remove(p, id);
        WorkerEntry w = roster.schedulable(workerId, p);
        if (w == null) {
            throw Refusal.notFound("schedulable worker " + Long.toUnsignedString(workerId) + " not found for " + p);
        }
        boolean track = trackPrefill != null ? trackPrefill : effectivePrefill != null || override.trackPrefill(config);
        requireFree(id);
        book(
                p,
                id,
                workerId,
                dpRank,
                prompt.sequenceHashes(),
                track && effectivePrefill != null ? effectivePrefill : 0,
                track,
                expectedOutputTokens,
                loraName);
        return new Booking(id, p, w, dpRank, prompt);
    }

    private void requireFree(String id) {
        if (ledger.holds(id)) {
            throw Refusal.conflict("selection " + id + " is already reserved or being reserved");
        }
    }

    private void book(
            PartitionKey p,
            String id,
            long workerId,
            int dpRank,
            long[] sequenceHashes,
            long prefillHint,
            boolean track,
            Long expectedOutputTokens,
            String loraName) {
        if (!ledger.withinBookingLimit(sequenceHashes.length)) {
            throw Refusal.invalid("a booking of " + sequenceHashes.length + " blocks is over the limit of "
                    + ledger.maxBookingBlocks() + " blocks per booking (--max-booking-blocks)");
        }
        if (!ledger.admits(sequenceHashes.length)) {
            throw Refusal.full("active bookings hold the most blocks this service keeps (--max-booked-blocks);"
                    + " try again when some have ended");
        }
        int blockSize = roster.partition(p).blockSize();
        LoadEvent.Added added = new LoadEvent.Added(
                p, blockSize, id, workerId, dpRank, loraName, sequenceHashes, track, expectedOutputTokens, prefillHint);
        ledger.hold(Reservation.booked(added, System.currentTimeMillis(), random.nextLong()));
        events.accept(added);
    }

    /** {@code POST /reservations/{id}/prefill_complete}; repeating it is harmless and republished. */
    public void prefillComplete(String id) {
        Reservation r = ledger.prefillComplete(held(id));
        events.accept(new LoadEvent.PrefillCompleted(
                r.partition(), r.blockSize(), id, r.workerId(), r.dpRank(), r.loraName()));
    }

    /** {@code POST /reservations/{id}/output_block}: NaN for no decay fraction. */
    public void outputBlock(String id, double decayFraction) {
        if (!Double.isNaN(decayFraction) && !(decayFraction >= 0.0 && decayFraction <= 1.0)) {
            throw Refusal.badRequest("decay_fraction must be between 0.0 and 1.0");
        }
        ledger.outputBlock(held(id), decayFraction);
    }

    /** {@code DELETE /reservations/{id}}. */
    public void free(String id) {
        Reservation r = held(id);
        ledger.release(r);
        ledger.markEnded(id, r.incarnation());
        events.accept(new LoadEvent.Freed(r.partition(), r.blockSize(), id, r.workerId(), r.dpRank(), r.loraName()));
    }

    private Reservation held(String id) {
        Reservation r = ledger.get(id);
        if (r == null) {
            throw Refusal.notFound("reservation " + id + " not found");
        }
        return r;
    }
}
