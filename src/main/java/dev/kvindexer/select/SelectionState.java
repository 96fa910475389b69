package dev.kvindexer.select;

import dev.kvindexer.load.SlotTracker;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The selection service's state (docs/api/selection.md), assembled from its parts over one load tracker: the {@link Roster} of
 * workers, the {@link Chooser}, this replica's {@link Bookings}, the {@link Mirror} of other replicas' bookings,
 * the {@link Ledger} of all held reservations and the {@link LoadViews}. Single-threaded by contract, so a
 * selection and its booking happen in one step.
 */
public final class SelectionState {
    private final SelectionConfig config;
    private final Roster roster;
    private final Chooser chooser;
    private final Bookings bookings;
    private final Mirror mirror;
    private final Ledger ledger;
    private final LoadViews views;
    private final SessionBindings sessions;

    /**
     * @param maxBookingBlocks blocks one booking may hold; a larger one is refused (a replica's is dropped)
     * @param maxBookedBlocks  blocks all held bookings may hold together, mirrored ones included
     * @param sessionTtlMillis the idle TTL of session bindings; 0 turns session affinity off
     */
    public SelectionState(
            SelectionConfig config,
            LongSupplier clockMillis,
            RandomGenerator random,
            PendingSelections pending,
            int maxBookingBlocks,
            long maxBookedBlocks,
            long sessionTtlMillis) {
        SlotTracker tracker = new SlotTracker(clockMillis, config.requestExpiryMillis());
        this.config = config;
        this.ledger = new Ledger(tracker, clockMillis, maxBookingBlocks, maxBookedBlocks);
        this.roster = new Roster(tracker, ledger);
        this.chooser = new Chooser(config, random, roster);
        this.sessions = sessionTtlMillis <= 0
                ? null
                : new SessionBindings(
                        sessionTtlMillis,
                        SessionBindings.MAX_ENTRIES,
                        clockMillis,
                        System.currentTimeMillis() * 1_000_000,
                        roster::schedulable,
                        roster::catalogued);
        if (sessions != null) {
            ledger.onEnded(sessions::released);
        }
        this.bookings = new Bookings(config, clockMillis, random, pending, roster, chooser, ledger, sessions);
        this.mirror = new Mirror(clockMillis, random, roster, ledger);
        this.views = new LoadViews(config, roster, chooser);
    }

    public SelectionConfig config() {
        return config;
    }

    public Roster roster() {
        return roster;
    }

    public Chooser chooser() {
        return chooser;
    }

    public Bookings bookings() {
        return bookings;
    }

    public Mirror mirror() {
        return mirror;
    }

    public Ledger ledger() {
        return ledger;
    }

    public LoadViews views() {
        return views;
    }

    /** The session bindings, or null when session affinity is off. */
    public SessionBindings sessions() {
        return sessions;
    }
}
