package dev.kvindexer.partition;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.event.EventBatch;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.LogThrottle;
import dev.kvindexer.metrics.WarningKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An open stream of a {@link Partition} and the sequencer that orders its batches: what it does on a gap, a loss, a
 * restart or a stale batch, and the one repair it may have asked a peer for. Runs on its partition's actor.
 */
final class OpenStream implements StreamSequencer.Actions {
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

    private final Partition p;
    final StreamId id;
    final StreamSequencer sequencer;
    /** Gaps, losses and restarts of a misbehaving engine can come thousands a second: one line per interval. */
    final LogThrottle gapLog = new LogThrottle();

    String defaultLora;
    /** The registered rank's activity record, so that the usual batch (naming no other rank) looks nothing up. */
    final EngineActivity registeredActivity;

    /** Identifies the repair in flight, so that an answer to an abandoned one changes nothing. */
    long repairId;

    boolean repairInFlight;
    /** A repair was asked for since the seqs last started over, up to {@link #repairAskedEnd}. */
    boolean repairAsked;
    /** The end of the last gap a repair was asked for: the same gap is not asked for again. */
    long repairAskedEnd;
    /**
     * Gaps lost while a repair or a replay was under way, [pendingStart, pendingEnd), asked for once it ended (after
     * a repair only if that found nothing).
     */
    boolean pending;

    long pendingStart;
    long pendingEnd;

    OpenStream(StreamId id, Partition p) {
        this.id = id;
        this.p = p;
        this.sequencer = new StreamSequencer(p.watermarks.of(id), this);
        this.registeredActivity = p.activityOf(id.workerId(), id.dpRank());
    }

    @Override
    public void apply(EventBatch batch) {
        int rank = batch.effectiveRank(id.dpRank());
        p.applyBatch(
                id.workerId(),
                rank,
                batch,
                rank == id.dpRank() ? registeredActivity : p.activityOf(id.workerId(), rank));
    }

    @Override
    public void restarted(EventBatch trigger) {
        int rank = trigger.effectiveRank(id.dpRank());
        p.index.removeWorkerDpRank(id.workerId(), rank);
        if (rank != id.dpRank()) {
            p.index.removeWorkerDpRank(id.workerId(), id.dpRank());
        }
        p.counters.warning(WarningKind.ENGINE_RESTART, 1);
        forgetRepair(true);
        if (gapLog.admit()) {
            LOG.warn(
                    "engine restart detected {} at seq={}: its blocks were cleared{}",
                    id,
                    Long.toUnsignedString(trigger.seq()),
                    gapLog.heldBackNote());
        }
    }

    @Override
    public void requestReplay(long start, long end, long replayId) {
        p.counters.gap(EventCounters.GAP_ZMQ_SEQ);
        if (gapLog.admit()) {
            LOG.info(
                    "gap on {}: replaying [{}, {}){}",
                    id,
                    Long.toUnsignedString(start),
                    Long.toUnsignedString(end),
                    gapLog.heldBackNote());
        }
        p.replays.accept(new ReplayRequest(
                p.self, id, sequencer.generation(), replayId, sequencer.replayEndpoint(), defaultLora, start, end));
    }

    @Override
    public void lost(long start, long end) {
        p.counters.gap(EventCounters.GAP_ZMQ_SEQ);
        long batches = Watermarks.batchesBetween(start, end);
        p.counters.warning(WarningKind.BATCHES_LOST, batches);
        boolean cleared = p.inexactPolicy == InexactStreamPolicy.CLEAR;
        if (cleared) {
            p.index.removeWorkerDpRank(id.workerId(), id.dpRank());
        }
        sequencer.watermark().lost(batches);
        askRepair(start, end);
        if (gapLog.admit()) {
            LOG.warn(
                    "{}; batches lost {} range=[{}, {}): the stream is inexact{}{}",
                    sequencer.replayEndpoint() == null
                            ? "No replay endpoint configured"
                            : "Replay could not bring them back",
                    id,
                    Long.toUnsignedString(start),
                    Long.toUnsignedString(end),
                    cleared ? ", its blocks were dropped (--inexact-stream-policy clear)" : "",
                    gapLog.heldBackNote());
        }
    }

    @Override
    public void stale(EventBatch batch) {
        p.counters.warning(WarningKind.STALE_BATCH, 1);
    }

    /**
     * One repair at a time: a gap lost meanwhile is asked for only if that one finds nothing, and a gap is never
     * asked for twice, so a stream no peer can repair costs one request per gap.
     */
    private void askRepair(long start, long end) {
        // During a replay the gap may grow, and the replay's own outcome is still to be shown: asked at its end.
        if (repairInFlight || sequencer.replaying()) {
            pendingStart = pending ? pendingStart : start;
            pendingEnd = end;
            pending = true;
            return;
        }
        if (repairAsked && Long.compareUnsigned(end, repairAskedEnd) <= 0) {
            return;
        }
        repairAsked = true;
        repairAskedEnd = end;
        repairInFlight = true;
        p.repairs.accept(new RepairRequest(
                p.self, id, sequencer.generation(), ++repairId, start, end, sequencer.replayEndpoint() != null));
    }

    /** The repair in flight ended; {@code found} whether it repaired the stream (or nothing needed it any more). */
    void repairEnded(boolean found) {
        repairInFlight = false;
        if (found) {
            pending = false;
        } else {
            askPending();
        }
    }

    /** Asks for the gaps lost while a repair or a replay was under way, once neither is. */
    void askPending() {
        if (pending && !repairInFlight && !sequencer.replaying()) {
            pending = false;
            askRepair(pendingStart, pendingEnd);
        }
    }

    /** The stream's blocks start over (an engine restart, a new listener generation): no answer applies any more. */
    void forgetRepair(boolean seqsStartOver) {
        repairId++;
        repairInFlight = false;
        pending = false;
        if (seqsStartOver) {
            repairAsked = false;
        }
    }
}
