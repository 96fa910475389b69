package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import java.util.ArrayDeque;

/**
 * Applies one stream's batches in sequence order (docs/protocol/zmq.md#sequence-tracking-and-gap-rules) and fences
 * engine restarts (docs/protocol/zmq.md#engine-restart): stale batches
 * are dropped, a hole is replayed from the engine before anything newer applies, and a live seq that goes
 * back means a new publisher process whose predecessor's blocks must go. Plain Java, driven by its partition.
 */
final class StreamSequencer {

    /** What the sequencer makes its partition do. */
    interface Actions {
        void apply(EventBatch batch);

        /** The engine restarted: drop the stream's blocks in every tier. */
        void restarted(EventBatch trigger);

        void requestReplay(long start, long end, long replayId);

        /** No replay endpoint: batches [start, end) are lost for good. */
        void lost(long start, long end);

        void stale(EventBatch batch);
    }

    private final Watermarks.Watermark watermark;
    private final Actions actions;
    private final ArrayDeque<EventBatch> waitingForReplay = new ArrayDeque<>();
    private long generation;
    private String replayEndpoint;
    private boolean liveSeen;
    private long lastLive;
    private boolean replaying;
    private long replayId;
    /** The end (exclusive) of the replay in flight: nothing at or past it may come from that replay. */
    private long replayEnd;
    /** The replay in flight was asked for by the first of the live batches waiting for it (not by replayHistory). */
    private boolean replayTriggeredByLive;

    private boolean blocksDropped;
    private boolean bootstrapped;
    private boolean installed;
    /** Set by {@link #installedFromSnapshot}: a first live seq at or below {@link #snapshotSeq} is a new process. */
    private boolean snapshotFence;

    private long snapshotSeq;

    StreamSequencer(Watermarks.Watermark watermark, Actions actions) {
        this.watermark = watermark;
        this.actions = actions;
    }

    /** A listener generation starts (registration or resume): the watermark stays, the live history does not. */
    void open(long generation, String replayEndpoint) {
        this.generation = generation;
        this.replayEndpoint = replayEndpoint;
        liveSeen = false;
        replaying = false;
        replayId++;
        waitingForReplay.clear();
    }

    /**
     * The stream is being re-created after its removal (unregister): its watermark survived, but the index no
     * longer holds any of its blocks. The first live batch still tells a restarted engine from a running one
     * (docs/protocol/zmq.md#engine-restart); a running one is then replayed from seq 0 instead of from the watermark,
     * because the blocks it
     * stored up to the watermark and still holds are gone from the index and would otherwise never come back.
     */
    void blocksDropped() {
        blocksDropped = true;
    }

    /**
     * The partition was recovered from a peer's dump, which already covers this stream's history: its first live
     * batch only establishes the watermark instead of replaying from 0 (as newer Dynamo builds do,
     * docs/protocol/zmq.md#sequence-tracking-and-gap-rules).
     */
    void bootstrappedFromPeer() {
        if (!watermark.isSet()) {
            bootstrapped = true;
        }
    }

    /**
     * The partition installed an exact snapshot of a peer, taken when this stream's watermark there was {@code seq}
     * (docs/protocol/recovery.md#recovery-algorithm). The listener subscribed before the snapshot was taken, so its first buffered batches
     * can be at or below the watermark: they are the same publisher's, already in the snapshot, and are dropped as
     * stale rather than read as an engine restart. Anything after the watermark applies or is replayed as usual.
     */
    void installedFromPeer(long seq) {
        watermark.advance(seq);
        installed = true;
        blocksDropped = false;
        bootstrapped = false;
        snapshotFence = false;
    }

    /**
     * The partition installed a snapshot taken before this node subscribed (its own data directory), when this
     * stream's watermark was {@code seq}. As after a peer's snapshot, live batches that the catch-up replay already
     * applied are stale. But unlike a peer's, the snapshot is older than the subscription: a running engine can only
     * send this node seqs above {@code seq}, so a first live seq at or below it means the engine restarted while the
     * node was away, and is fenced as at a registration (docs/protocol/zmq.md#engine-restart).
     */
    void installedFromSnapshot(long seq) {
        installedFromPeer(seq);
        snapshotFence = true;
        snapshotSeq = seq;
    }

    /**
     * Asks the engine now for every batch it still holds after the watermark (from seq 0 when nothing is held), rather
     * than waiting for a live batch to show the gap: the stream's history was lost with every node that held it. Live
     * batches arriving meanwhile wait for the replay, and those it covered are dropped as stale, not taken for an
     * engine restart. Nothing to do without a replay endpoint.
     */
    void replayHistory() {
        if (replayEndpoint == null || replaying) {
            return;
        }
        if (blocksDropped) {
            watermark.reset();
            blocksDropped = false;
        }
        installed = true;
        replayAfterWatermark();
    }

    /**
     * The stream's blocks were replaced by a peer's exact copy, taken when its watermark there was {@code seq}. What
     * this node had applied after {@code seq} went with its own blocks, so the engine is asked for everything after
     * it (a replay in flight is abandoned for that one, and live batches keep waiting); what the peer applied after
     * this node's watermark is in the copy, and its live batches are dropped as stale when they come.
     */
    void repairedFromPeer(long seq) {
        boolean behind = watermark.isSet() && Long.compareUnsigned(seq, watermark.seq()) < 0;
        watermark.advance(seq);
        installed = true;
        blocksDropped = false;
        bootstrapped = false;
        if (behind && replayEndpoint != null) {
            replayAfterWatermark();
        }
    }

    private void replayAfterWatermark() {
        replaying = true;
        replayEnd = ReplayRequest.OPEN_END;
        replayTriggeredByLive = false;
        actions.requestReplay(watermark.isSet() ? watermark.seq() + 1 : 0, ReplayRequest.OPEN_END, ++replayId);
    }

    Watermarks.Watermark watermark() {
        return watermark;
    }

    long generation() {
        return generation;
    }

    /** The engine ROUTER of the current generation, or null. */
    String replayEndpoint() {
        return replayEndpoint;
    }

    boolean replaying() {
        return replaying;
    }

    void onLive(EventBatch batch) {
        long seq = batch.seq();
        // ZMQ keeps order on a connection, so a live seq at or below the last live one, or a first live seq at
        // or below the watermark, can only come from a new publisher process.
        boolean restart = liveSeen
                ? Long.compareUnsigned(seq, lastLive) <= 0
                : !installed && watermark.isSet() && Long.compareUnsigned(seq, watermark.seq()) <= 0
                        || snapshotFence && Long.compareUnsigned(seq, snapshotSeq) <= 0;
        snapshotFence = false;
        if (restart) {
            watermark.reset();
            replaying = false;
            replayId++;
            waitingForReplay.clear();
            actions.restarted(batch);
        } else if (blocksDropped && !liveSeen) {
            // A running engine: nothing below the watermark is indexed any more, so the whole ring must come back.
            watermark.reset();
        }
        blocksDropped = false;
        installed = false;
        liveSeen = true;
        lastLive = seq;
        if (replaying) {
            waitingForReplay.add(batch);
        } else {
            sequence(batch, true);
        }
    }

    /** {@code mayReplay} is false for the batch that triggered the replay just finished: no hole is asked for twice. */
    private void sequence(EventBatch batch, boolean mayReplay) {
        long seq = batch.seq();
        if (watermark.isSet() && Long.compareUnsigned(seq, watermark.seq()) <= 0) {
            actions.stale(batch);
            return;
        }
        if (bootstrapped && !watermark.isSet()) {
            bootstrapped = false;
            applyInOrder(batch);
            return;
        }
        long start = watermark.isSet() ? watermark.seq() + 1 : 0;
        if (Long.compareUnsigned(seq, start) > 0) {
            if (replayEndpoint != null && mayReplay) {
                replaying = true;
                replayEnd = seq;
                replayTriggeredByLive = true;
                waitingForReplay.addFirst(batch);
                actions.requestReplay(start, seq, ++replayId);
                return;
            }
            actions.lost(start, seq);
        }
        applyInOrder(batch);
    }

    private void applyInOrder(EventBatch batch) {
        actions.apply(batch);
        watermark.advance(batch.seq());
    }

    /** A batch fetched by replay {@code id}; ignored when that replay was abandoned. */
    void onReplayed(long id, EventBatch batch) {
        if (id != replayId || !replaying) {
            return;
        }
        if (watermark.isSet() && Long.compareUnsigned(batch.seq(), watermark.seq()) <= 0
                || Long.compareUnsigned(batch.seq(), replayEnd) >= 0) {
            return;
        }
        if (watermark.isSet() && Long.compareUnsigned(batch.seq(), watermark.seq() + 1) > 0) {
            // The engine no longer holds what came right after the watermark: those batches are gone for good.
            actions.lost(watermark.seq() + 1, batch.seq());
        }
        applyInOrder(batch);
    }

    /** Replay {@code id} ended (complete or not): the live batches that waited for it go through the rules again. */
    void onReplayFinished(long id) {
        if (id != replayId || !replaying) {
            return;
        }
        replaying = false;
        // The first waiting batch triggered this replay: its hole is not asked for twice. A later one can show a new
        // hole (a batch lost after the engine served the replay), which is replayed like any other.
        boolean trigger = replayTriggeredByLive;
        while (!replaying && !waitingForReplay.isEmpty()) {
            sequence(waitingForReplay.poll(), !trigger);
            trigger = false;
        }
    }
}
