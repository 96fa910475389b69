package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.dump.PartitionDumpJson;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.recovery.SnapshotCollector;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A stream that lost batches for good is marked inexact (docs/protocol/recovery.md#inexact-streams): by a replay that
 * starts after the watermark, or a hole with no replay endpoint; the mark travels in snapshots, is dropped when the
 * stream's blocks start over, and {@link InexactStreamPolicy#CLEAR} drops the blocks held before the loss.
 */
class InexactStreamTest {
    private static final PartitionKey KEY = new PartitionKey("m", "t");
    private static final long WORKER = 7;
    private final EventCounters counters = new EventCounters();
    private final Watermarks watermarks = new Watermarks();
    private final List<ReplayRequest> replays = new ArrayList<>();

    private Partition partition(InexactStreamPolicy policy) {
        return new Partition(KEY, 4, null, counters, watermarks, replays::add, policy, repair -> {});
    }

    private static EventBatch store(long seq, long hash, Long parent) {
        return ExactRecoveryTest.storeBatch(seq, hash, parent);
    }

    private Watermarks.Watermark mark() {
        return watermarks.find(new StreamId(KEY, WORKER, 0));
    }

    private static int held(Partition p) {
        return p.index().heldBlocks(WORKER, 0, StorageTier.DEVICE);
    }

    /** Seqs 0 and 1 applied live; seq 4 shows a hole, whose replay returns only seq 3: seq 2 is gone. */
    private Partition replayStartingAfterTheWatermark(InexactStreamPolicy policy) {
        Partition p = partition(policy);
        p.openStream(new StreamSpec(WORKER, 0, 1, "tcp://engine:1"));
        p.onLive(WORKER, 0, 1, store(0, 10, null));
        p.onLive(WORKER, 0, 1, store(1, 11, 10L));
        assertTrue(mark().exact());
        p.onLive(WORKER, 0, 1, store(4, 14, 13L));
        ReplayRequest r = replays.get(replays.size() - 1);
        assertEquals(2, r.start());
        p.onReplayed(WORKER, 0, 1, r.replayId(), store(3, 13, null));
        p.onReplayFinished(WORKER, 0, 1, r.replayId());
        return p;
    }

    @Test
    void aReplayThatStartsAfterTheWatermarkMakesTheStreamInexact() {
        Partition p = replayStartingAfterTheWatermark(InexactStreamPolicy.KEEP);
        assertFalse(mark().exact());
        assertEquals(1, mark().lostBatches());
        assertEquals(4, mark().seq());
        assertEquals(4, held(p), "blocks before the loss are kept by default");
        assertEquals(1, watermarks.inexactStreams());
    }

    @Test
    void theClearPolicyDropsWhatWasHeldBeforeTheLoss() {
        Partition p = replayStartingAfterTheWatermark(InexactStreamPolicy.CLEAR);
        assertFalse(mark().exact());
        assertEquals(2, held(p), "only seqs 3 and 4, which came after the loss");
        assertEquals(0, p.index().copies(WORKER, 0, StorageTier.DEVICE, 10));
    }

    @Test
    void aHoleWithoutReplayEndpointMakesTheStreamInexact() {
        Partition p = partition(InexactStreamPolicy.KEEP);
        p.openStream(new StreamSpec(WORKER, 0, 1, null));
        p.onLive(WORKER, 0, 1, store(0, 10, null));
        p.onLive(WORKER, 0, 1, store(5, 15, null));
        assertEquals(4, mark().lostBatches());
    }

    /**
     * A publisher whose seqs jump anywhere (a fuzzer, a confused engine) loses more than a signed count holds: the
     * count saturates, stays positive, and the snapshot carrying it still reads as /dump and installs.
     */
    /** A partition's snapshot payload as a peer would read it from a one-section document. */
    private static PeerSnapshot installable(byte[] payload) throws Exception {
        ByteArrayOutputStream doc = new ByteArrayOutputStream();
        doc.write(SnapshotWriter.header());
        doc.write(SnapshotWriter.sectionHead(KEY, 4, payload.length));
        doc.write(payload);
        doc.write(SnapshotWriter.end());
        return SnapshotCollector.exactSection("test", KEY, doc.toByteArray(), 1 << 20);
    }

    @Test
    void seqsThatJumpAnywhereSaturateTheLossAndTheSnapshotStillReads() throws Exception {
        Partition p = partition(InexactStreamPolicy.KEEP);
        p.openStream(new StreamSpec(WORKER, 0, 1, null));
        p.onLive(WORKER, 0, 1, store(0, 10, null));
        p.onLive(WORKER, 0, 1, store(1L << 62, 21, null));
        p.onLive(WORKER, 0, 1, store(Long.MIN_VALUE + (1L << 62), 22, null));
        assertEquals(Long.MAX_VALUE, mark().lostBatches());
        assertEquals(
                Long.MAX_VALUE,
                counters.warningCount(WarningKind.BATCHES_LOST),
                "Dynamo's lost-batch warning stops at the largest count, never wraps negative");
        byte[] payload = p.snapshot();
        PeerSnapshot snapshot = installable(payload);
        assertEquals(List.of(new PeerSnapshot.StreamLoss(WORKER, 0, Long.MAX_VALUE)), snapshot.losses());
        PartitionDumpJson json = new PartitionDumpJson(4, payload, new long[0]);
        StringBuilder text = new StringBuilder();
        for (String piece; (piece = json.next(1 << 16)) != null; ) {
            text.append(piece);
        }
        assertTrue(text.toString().contains("\"block_hash\":22"), text.toString());
    }

    @Test
    void anEngineRestartOrARemovalMakesTheStreamExactAgain() {
        Partition p = replayStartingAfterTheWatermark(InexactStreamPolicy.KEEP);
        p.onLive(WORKER, 0, 1, store(0, 20, null));
        assertTrue(mark().exact(), "a restarted engine's blocks start over");
        p.onLive(WORKER, 0, 1, store(3, 23, null));
        p.onReplayFinished(WORKER, 0, 1, replays.get(replays.size() - 1).replayId());
        assertFalse(mark().exact());
        p.removeStreams(WORKER, 0, true);
        assertTrue(mark().exact(), "an unregistered stream holds nothing");
    }

    @Test
    void theLossTravelsInTheSnapshotAndAnInstalledCopyIsInexactToo() throws Exception {
        Partition source = replayStartingAfterTheWatermark(InexactStreamPolicy.KEEP);
        byte[] payload = source.snapshot();
        PeerSnapshot snapshot = installable(payload);
        assertEquals(List.of(new PeerSnapshot.StreamLoss(WORKER, 0, 1)), snapshot.losses());

        Watermarks other = new Watermarks();
        Partition copy =
                new Partition(KEY, 4, null, counters, other, replays::add, InexactStreamPolicy.KEEP, repair -> {});
        copy.openStream(new StreamSpec(WORKER, 0, 1, "tcp://engine:1"));
        copy.recover(snapshot);
        Watermarks.Watermark copied = other.find(new StreamId(KEY, WORKER, 0));
        assertEquals(1, copied.lostBatches());
        assertEquals(4, copied.seq());
        assertEquals(4, held(copy));
    }

    /**
     * A registered stream, then an old snapshot (a data directory's) installed with a catch-up replay: block 10, the
     * watermark 41.
     */
    private Partition installedFromOldSnapshot() {
        Partition p = partition(InexactStreamPolicy.KEEP);
        p.openStream(new StreamSpec(WORKER, 0, 1, "tcp://engine:1"));
        p.recover(new PeerSnapshot(
                        List.of(new PeerSnapshot.Event(
                                WORKER, 0, store(0, 10, null).events().get(0))),
                        List.of(new PeerSnapshot.StreamWatermark(WORKER, 0, 41)),
                        true)
                .replayingAtInstall());
        return p;
    }

    @Test
    void anEngineRestartedWhileTheNodeWasAwayIsFencedAfterAnOldSnapshot() {
        Partition p = installedFromOldSnapshot();
        // The new process has published seqs 0 and 1 only: nothing after 41 to catch up on.
        p.onReplayFinished(WORKER, 0, 1, replays.get(0).replayId());
        p.onLive(WORKER, 0, 1, store(1, 21, 20L));
        assertEquals(0, p.index().copies(WORKER, 0, StorageTier.DEVICE, 10), "the old process's block is gone");
        assertEquals(1, counters.warningCount(WarningKind.ENGINE_RESTART));
        ReplayRequest fromZero = replays.get(1);
        assertEquals(0, fromZero.start());
        assertEquals(1, fromZero.end());
        p.onReplayed(WORKER, 0, 1, fromZero.replayId(), store(0, 20, null));
        p.onReplayFinished(WORKER, 0, 1, fromZero.replayId());
        assertEquals(2, held(p), "the new process's blocks, and only those");
        assertEquals(1, mark().seq());
        assertTrue(mark().exact());
    }

    @Test
    void anOldSnapshotInstalledWithReplayAsksEveryEngineFromItsWatermark() {
        Partition p = installedFromOldSnapshot();
        assertEquals(1, replays.size());
        assertEquals(42, replays.get(0).start());
        assertEquals(ReplayRequest.OPEN_END, replays.get(0).end());
        // The engine still holds 42 on: exact.
        p.onReplayed(WORKER, 0, 1, replays.get(0).replayId(), store(42, 11, 10L));
        p.onReplayFinished(WORKER, 0, 1, replays.get(0).replayId());
        assertTrue(mark().exact());
        assertEquals(42, mark().seq());
    }
}
