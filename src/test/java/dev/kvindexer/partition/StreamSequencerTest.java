package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The gap, stale and restart rules of docs/protocol/zmq.md#sequence-tracking-and-gap-rules and
 * docs/protocol/zmq.md#engine-restart, as seen by one stream. */
class StreamSequencerTest {
    private final List<String> log = new ArrayList<>();
    private Watermarks.Watermark watermark;
    private StreamSequencer seq;
    private long lastReplayId;

    private final StreamSequencer.Actions actions = new StreamSequencer.Actions() {
        @Override
        public void apply(EventBatch batch) {
            log.add("apply " + batch.seq());
        }

        @Override
        public void restarted(EventBatch trigger) {
            log.add("restart at " + trigger.seq());
        }

        @Override
        public void requestReplay(long start, long end, long replayId) {
            lastReplayId = replayId;
            log.add("replay [" + start + "," + end + ")");
        }

        @Override
        public void lost(long start, long end) {
            log.add("lost [" + start + "," + end + ")");
        }

        @Override
        public void stale(EventBatch batch) {
            log.add("stale " + batch.seq());
        }
    };

    private static EventBatch batch(long s) {
        return new EventBatch(s, EventBatch.NO_RANK, List.of(), 0, 0, 0);
    }

    @BeforeEach
    void setUp() {
        watermark = new Watermarks().of(new StreamId(new PartitionKey("m", "t"), 1, 0));
        seq = new StreamSequencer(watermark, actions);
        seq.open(1, "tcp://engine:5558");
    }

    private void live(long... seqs) {
        for (long s : seqs) {
            seq.onLive(batch(s));
        }
    }

    @Test
    void inOrderBatchesApplyAndAdvanceTheWatermark() {
        live(0, 1, 2);
        assertEquals(List.of("apply 0", "apply 1", "apply 2"), log);
        assertEquals(2, watermark.seq());
    }

    @Test
    void firstBatchAboveZeroReplaysFromZeroThenTheLiveBatchApplies() {
        live(3);
        assertEquals(List.of("replay [0,3)"), log);
        assertTrue(seq.replaying());
        live(4);
        for (long s = 0; s < 5; s++) {
            seq.onReplayed(lastReplayId, batch(s));
        }
        seq.onReplayFinished(lastReplayId);
        // Replayed batches at or past the requested end are not the replay's to apply: the live ones that waited are.
        assertEquals(List.of("replay [0,3)", "apply 0", "apply 1", "apply 2", "apply 3", "apply 4"), log);
        assertEquals(4, watermark.seq());
        assertFalse(seq.replaying());
    }

    @Test
    void aReplayedBatchFarPastTheRequestedEndMovesNoWatermark() {
        live(3);
        seq.onReplayed(lastReplayId, batch(1_000_000_000L));
        seq.onReplayFinished(lastReplayId);
        live(4);
        assertEquals(List.of("replay [0,3)", "lost [0,3)", "apply 3", "apply 4"), log);
        assertEquals(4, watermark.seq());
    }

    @Test
    void aGapReplaysTheHoleAndLiveBatchesWaitForIt() {
        live(0, 1);
        live(4);
        live(5);
        assertEquals(List.of("apply 0", "apply 1", "replay [2,4)"), log);
        seq.onReplayed(lastReplayId, batch(2));
        seq.onReplayed(lastReplayId, batch(3));
        seq.onReplayFinished(lastReplayId);
        assertEquals(List.of("apply 0", "apply 1", "replay [2,4)", "apply 2", "apply 3", "apply 4", "apply 5"), log);
    }

    @Test
    void anIncompleteReplayIsNotAskedForTwice() {
        live(0);
        live(5);
        seq.onReplayed(lastReplayId, batch(3));
        seq.onReplayFinished(lastReplayId);
        live(6);
        assertEquals(
                List.of("apply 0", "replay [1,5)", "lost [1,3)", "apply 3", "lost [4,5)", "apply 5", "apply 6"), log);
    }

    @Test
    void withoutAReplayEndpointTheHoleIsCountedAsLost() {
        seq.open(2, null);
        live(2, 3, 7);
        assertEquals(List.of("lost [0,2)", "apply 2", "apply 3", "lost [4,7)", "apply 7"), log);
    }

    @Test
    void aLiveSeqThatGoesBackIsAnEngineRestart() {
        live(0, 1, 2, 3);
        live(0, 1);
        assertEquals(List.of("apply 0", "apply 1", "apply 2", "apply 3", "restart at 0", "apply 0", "apply 1"), log);
        assertEquals(1, watermark.seq());
    }

    @Test
    void aRestartedEngineThatAlreadyPublishedReplaysItsNewHistory() {
        live(0, 1, 2, 3, 4);
        live(2);
        assertEquals("restart at 2", log.get(5));
        assertEquals("replay [0,2)", log.get(6));
    }

    @Test
    void aNewGenerationResumesFromTheWatermark() {
        live(0, 1, 2);
        seq.open(2, "tcp://engine:5558");
        live(6);
        assertEquals(List.of("apply 0", "apply 1", "apply 2", "replay [3,6)"), log);
        assertEquals(2, watermark.seq(), "the watermark survived the new generation");
    }

    @Test
    void aFirstLiveSeqAtOrBelowTheWatermarkOfANewGenerationIsARestart() {
        live(0, 1, 2);
        seq.open(2, "tcp://engine:5558");
        live(0);
        assertEquals(List.of("apply 0", "apply 1", "apply 2", "restart at 0", "apply 0"), log);
    }

    @Test
    void aNewGenerationContinuingInOrderIsNotARestart() {
        live(0, 1, 2);
        seq.open(2, "tcp://engine:5558");
        live(3);
        assertEquals(List.of("apply 0", "apply 1", "apply 2", "apply 3"), log);
    }

    @Test
    void aReRegisteredRunningEngineIsReplayedFromZeroBecauseUnregisterDroppedItsBlocks() {
        live(0, 1, 2);
        StreamSequencer reRegistered = new StreamSequencer(watermark, actions);
        reRegistered.blocksDropped();
        reRegistered.open(5, "tcp://engine:5558");
        reRegistered.onLive(batch(7));
        assertEquals(List.of("apply 0", "apply 1", "apply 2", "replay [0,7)"), log);
    }

    @Test
    void aReRegisteredRestartedEngineIsStillFencedByTheSurvivingWatermark() {
        live(0, 1, 2);
        StreamSequencer reRegistered = new StreamSequencer(watermark, actions);
        reRegistered.blocksDropped();
        reRegistered.open(5, "tcp://engine:5558");
        reRegistered.onLive(batch(1));
        assertEquals(List.of("apply 0", "apply 1", "apply 2", "restart at 1", "replay [0,1)"), log);
    }

    @Test
    void aRestartDuringAReplayAbandonsIt() {
        live(0);
        live(5);
        long abandoned = lastReplayId;
        live(0);
        seq.onReplayed(abandoned, batch(1));
        seq.onReplayFinished(abandoned);
        live(1);
        assertEquals(List.of("apply 0", "replay [1,5)", "restart at 0", "apply 0", "apply 1"), log);
    }

    @Test
    void afterAPeersSnapshotAFirstLiveSeqAtOrBelowItsWatermarkIsStale() {
        // The listener subscribed before the live peer took its snapshot: the engine may have sent it seqs up to it.
        seq.installedFromPeer(10);
        live(9, 11);
        assertEquals(List.of("stale 9", "apply 11"), log);
    }

    @Test
    void afterItsOwnSnapshotAFirstLiveSeqAtOrBelowItsWatermarkIsAnEngineRestartedWhileTheNodeWasAway() {
        seq.installedFromSnapshot(10);
        seq.replayHistory();
        long catchUp = lastReplayId;
        // The new process published 3 batches: the catch-up replay from 11 finds nothing, the next live batch is 3.
        seq.onReplayFinished(catchUp);
        live(3);
        seq.onReplayed(lastReplayId, batch(0));
        seq.onReplayed(lastReplayId, batch(1));
        seq.onReplayed(lastReplayId, batch(2));
        seq.onReplayFinished(lastReplayId);
        live(4);
        assertEquals(
                List.of(
                        "replay [11," + ReplayRequest.OPEN_END + ")",
                        "restart at 3",
                        "replay [0,3)",
                        "apply 0",
                        "apply 1",
                        "apply 2",
                        "apply 3",
                        "apply 4"),
                log);
        assertTrue(watermark.exact());
    }

    @Test
    void anEngineRestartShownWhileTheCatchUpReplayRunsAbandonsIt() {
        seq.installedFromSnapshot(10);
        seq.replayHistory();
        long catchUp = lastReplayId;
        live(2);
        seq.onReplayed(catchUp, batch(11));
        seq.onReplayFinished(catchUp);
        assertEquals(List.of("replay [11," + ReplayRequest.OPEN_END + ")", "restart at 2", "replay [0,2)"), log);
        assertFalse(watermark.isSet());
    }

    @Test
    void afterItsOwnSnapshotLiveBatchesTheCatchUpReplayAlreadyAppliedAreStale() {
        seq.installedFromSnapshot(10);
        seq.replayHistory();
        // Published after the subscription, so above the snapshot; they wait behind the replay, which brings them too.
        live(13, 14);
        for (long s = 11; s <= 15; s++) {
            seq.onReplayed(lastReplayId, batch(s));
        }
        seq.onReplayFinished(lastReplayId);
        live(16);
        assertEquals(
                List.of(
                        "replay [11," + ReplayRequest.OPEN_END + ")",
                        "apply 11",
                        "apply 12",
                        "apply 13",
                        "apply 14",
                        "apply 15",
                        "stale 13",
                        "stale 14",
                        "apply 16"),
                log);
    }

    @Test
    void unsignedSeqsAboveTwoToThe63AreOrderedAsUnsigned() {
        long big = Long.parseUnsignedLong("9223372036854775808");
        live(0);
        seq.open(2, null);
        live(big);
        live(big + 1);
        assertEquals(
                List.of("apply 0", "lost [1," + Long.toString(big) + ")", "apply " + big, "apply " + (big + 1)), log);
    }
}
