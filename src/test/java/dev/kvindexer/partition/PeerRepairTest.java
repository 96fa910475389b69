package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.WarningKind;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A stream that lost batches for good asks for a peer's copy (docs/protocol/recovery.md#gap-repair-from-a-peer): one
 * request at a time, never twice for a gap; a copy that covers the gap replaces the stream's blocks and makes it exact
 * again, the engine replaying what this node had applied past the copy; a copy that does not, or an answer that came
 * after the stream started over, changes nothing.
 */
class PeerRepairTest {
    private static final PartitionKey KEY = new PartitionKey("m", "t");
    private static final long WORKER = 7;
    private static final String ENGINE = "tcp://engine:1";
    private final EventCounters counters = new EventCounters();
    private final Watermarks watermarks = new Watermarks();
    private final List<ReplayRequest> replays = new ArrayList<>();
    private final List<RepairRequest> repairs = new ArrayList<>();
    private final Partition p =
            new Partition(KEY, 4, null, counters, watermarks, replays::add, InexactStreamPolicy.KEEP, repairs::add);

    /** Stores block {@code hash} (engine hash hash + 1000) under {@code parent}, or as a root. */
    private static KvEvent stored(long hash, Long parent) {
        return new KvEvent.Stored(
                StorageTier.DEVICE, parent != null, parent == null ? 0 : parent, new long[] {hash}, new long[] {
                    hash + 1000
                });
    }

    private static EventBatch store(long seq, long hash, Long parent) {
        return new EventBatch(seq, EventBatch.NO_RANK, List.of(stored(hash, parent)), 0, 0, 0);
    }

    /** A peer's copy of the stream: the chain 10, 11, ... up to {@code 10 + seq}, one block per batch, at {@code seq}. */
    private static PeerSnapshot chainUpTo(long seq) {
        List<PeerSnapshot.Event> events = new ArrayList<>();
        for (long s = 0; s <= seq; s++) {
            events.add(new PeerSnapshot.Event(WORKER, 0, stored(10 + s, s == 0 ? null : 9 + s)));
        }
        // Another rank of the instance: not the repaired stream's, so it stays out.
        events.add(new PeerSnapshot.Event(WORKER, 1, stored(99, null)));
        return new PeerSnapshot(events, List.of(new PeerSnapshot.StreamWatermark(WORKER, 0, seq)), true);
    }

    private Watermarks.Watermark mark() {
        return watermarks.find(new StreamId(KEY, WORKER, 0));
    }

    private int held() {
        return p.index().heldBlocks(WORKER, 0, StorageTier.DEVICE);
    }

    private RepairRequest lastRepair() {
        return repairs.get(repairs.size() - 1);
    }

    /** Seqs 0 and 1 live, then 4: its replay brings back 3 only, so seq 2 is lost; 3 and 4 are applied. */
    private void loseSeqTwo() {
        p.openStream(new StreamSpec(WORKER, 0, 1, ENGINE));
        p.onLive(WORKER, 0, 1, store(0, 10, null));
        p.onLive(WORKER, 0, 1, store(1, 11, 10L));
        p.onLive(WORKER, 0, 1, store(4, 14, 13L));
        ReplayRequest r = replays.get(replays.size() - 1);
        p.onReplayed(WORKER, 0, 1, r.replayId(), store(3, 13, 12L));
        assertFalse(mark().exact());
        assertTrue(repairs.isEmpty(), "asked once the replay has ended and shown its outcome");
        p.onReplayFinished(WORKER, 0, 1, r.replayId());
    }

    @Test
    void aLossAsksForARepairOfItsGap() {
        loseSeqTwo();
        assertEquals(1, repairs.size());
        RepairRequest r = lastRepair();
        assertEquals(new StreamId(KEY, WORKER, 0), r.stream());
        assertEquals(2, r.gapStart());
        assertEquals(3, r.gapEnd());
        assertEquals(1, r.generation());
        assertEquals("batches [2, 3) lost by the engine's replay", r.describe());
    }

    @Test
    void aCopyAtTheSameWatermarkReplacesTheBlocksAndMakesTheStreamExact() {
        loseSeqTwo();
        assertEquals(2, held(), "10 and 11: 13 and 14 continued the lost 12 and were skipped");
        int replaysBefore = replays.size();

        assertEquals(RepairOutcome.REPAIRED, p.repair(lastRepair(), chainUpTo(4)));
        assertTrue(mark().exact());
        assertEquals(0, watermarks.inexactStreams());
        assertEquals(4, mark().seq());
        assertEquals(5, held(), "the peer's chain 10..14");
        assertEquals(0, p.index().heldBlocks(WORKER, 1, StorageTier.DEVICE), "another rank's blocks stay out");
        assertEquals(replaysBefore, replays.size(), "nothing applied here past the copy: nothing to replay");

        p.onLive(WORKER, 0, 1, store(5, 15, 14L));
        assertEquals(6, held(), "the stream goes on from the copy's watermark");
        assertEquals(RepairOutcome.OUTDATED, p.repair(lastRepair(), chainUpTo(4)), "an answer counts once");
    }

    @Test
    void aCopyOlderThanThisNodeIsReplayedForwardFromTheEngine() {
        loseSeqTwo();
        assertEquals(RepairOutcome.REPAIRED, p.repair(lastRepair(), chainUpTo(3)));
        ReplayRequest replay = replays.get(replays.size() - 1);
        assertEquals(4, replay.start(), "what this node had applied after the copy went with its blocks");
        assertEquals(ReplayRequest.OPEN_END, replay.end());
        assertEquals(4, held(), "10..13 from the copy");

        // A live batch during that replay waits for it; the replay covers it, so it is not applied twice.
        p.onLive(WORKER, 0, 1, store(5, 15, 14L));
        assertEquals(4, held());
        p.onReplayed(WORKER, 0, 1, replay.replayId(), store(4, 14, 13L));
        p.onReplayed(WORKER, 0, 1, replay.replayId(), store(5, 15, 14L));
        p.onReplayFinished(WORKER, 0, 1, replay.replayId());
        assertEquals(6, held());
        assertEquals(1, p.index().copies(WORKER, 0, StorageTier.DEVICE, 15));
        assertEquals(5, mark().seq());
        assertTrue(mark().exact());
    }

    @Test
    void aCopyThatDoesNotCoverTheGapOrLostBatchesItselfIsRefused() {
        loseSeqTwo();
        assertEquals(RepairOutcome.BEHIND, p.repair(lastRepair(), chainUpTo(1)), "the copy ends before seq 2");
        PeerSnapshot lossy = chainUpTo(4);
        lossy = new PeerSnapshot(
                lossy.events(), lossy.watermarks(), true, List.of(new PeerSnapshot.StreamLoss(WORKER, 0, 1)), false);
        assertEquals(RepairOutcome.BEHIND, p.repair(lastRepair(), lossy));
        assertFalse(mark().exact());
        assertEquals(2, held(), "nothing changed");
        assertEquals(RepairOutcome.REPAIRED, p.repair(lastRepair(), chainUpTo(4)), "the next peer may still do");
    }

    @Test
    void withoutAReplayEndpointOnlyACopyAtLeastAsNewAsThisNodesIsTaken() {
        p.openStream(new StreamSpec(WORKER, 0, 1, null));
        p.onLive(WORKER, 0, 1, store(0, 10, null));
        p.onLive(WORKER, 0, 1, store(3, 13, 12L));
        RepairRequest r = lastRepair();
        assertEquals("batches [1, 3) lost (no replay endpoint)", r.describe());
        assertEquals(RepairOutcome.BEHIND, p.repair(r, chainUpTo(2)), "seq 3 would be lost with this node's blocks");

        assertEquals(RepairOutcome.REPAIRED, p.repair(r, chainUpTo(5)));
        assertEquals(5, mark().seq());
        p.onLive(WORKER, 0, 1, store(4, 14, 13L));
        assertEquals(1, counters.warningCount(WarningKind.STALE_BATCH), "the copy holds it already");
        p.onLive(WORKER, 0, 1, store(6, 16, 15L));
        assertEquals(7, held());
        assertTrue(mark().exact());
    }

    @Test
    void oneRepairAtATimeAndAGapIsNeverAskedForTwice() {
        p.openStream(new StreamSpec(WORKER, 0, 1, null));
        p.onLive(WORKER, 0, 1, store(0, 10, null));
        p.onLive(WORKER, 0, 1, store(3, 13, null));
        p.onLive(WORKER, 0, 1, store(6, 16, null));
        p.onLive(WORKER, 0, 1, store(9, 19, null));
        assertEquals(1, repairs.size(), "the gaps lost meanwhile wait for the repair in flight");

        p.repairFailed(lastRepair());
        assertEquals(2, repairs.size());
        assertEquals(4, lastRepair().gapStart(), "every gap lost meanwhile, at once");
        assertEquals(9, lastRepair().gapEnd());
        p.repairFailed(lastRepair());
        p.repairFailed(lastRepair());
        assertEquals(2, repairs.size(), "no peer had it: not asked again");

        p.onLive(WORKER, 0, 1, store(12, 22, null));
        assertEquals(3, repairs.size(), "a new gap is asked for");
        assertEquals(10, lastRepair().gapStart());
    }

    @Test
    void anAnswerAfterTheStreamStartedOverChangesNothing() {
        loseSeqTwo();
        RepairRequest beforeRestart = lastRepair();
        p.onLive(WORKER, 0, 1, store(0, 20, null));
        assertTrue(mark().exact(), "the engine restarted: its blocks start over");
        assertEquals(RepairOutcome.OUTDATED, p.repair(beforeRestart, chainUpTo(4)));
        assertEquals(1, held());

        p.onLive(WORKER, 0, 1, store(3, 23, null));
        ReplayRequest r = replays.get(replays.size() - 1);
        p.onReplayFinished(WORKER, 0, 1, r.replayId());
        assertEquals(2, repairs.size(), "the restarted engine's gap is asked for, though its seqs are lower");
        RepairRequest ofOldGeneration = lastRepair();

        p.openStream(new StreamSpec(WORKER, 0, 2, ENGINE));
        assertEquals(RepairOutcome.OUTDATED, p.repair(ofOldGeneration, chainUpTo(4)), "a new listener generation");
        assertFalse(mark().exact());
    }
}
