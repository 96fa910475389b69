package dev.kvindexer.partition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * A partition installing a peer's exact snapshot (docs/protocol/recovery.md#recovery-algorithm): buffered batches at or below a stream's
 * watermark are dropped as already applied (not read as an engine restart), the next one applies, a hole is replayed.
 */
class ExactRecoveryTest {
    private static final long WORKER = 7;
    private final EventCounters counters = new EventCounters();
    private final List<ReplayRequest> replays = new ArrayList<>();
    private final Partition partition =
            new Partition(new PartitionKey("m", "t"), 4, null, counters, new Watermarks(), replays::add);

    /** A batch of {@code seq} storing one device block {@code hash} (tokens hash {@code hash + 1000}) under {@code parent}. */
    static EventBatch storeBatch(long seq, long hash, Long parent) {
        return new EventBatch(
                seq,
                EventBatch.NO_RANK,
                List.of(new KvEvent.Stored(
                        StorageTier.DEVICE, parent != null, parent == null ? 0 : parent, new long[] {hash}, new long[] {
                            hash + 1000
                        })),
                0,
                0,
                0);
    }

    private void open() {
        partition.openStream(new StreamSpec(WORKER, 0, 1, "tcp://engine:1"));
    }

    private void live(EventBatch b) {
        partition.onLive(WORKER, 0, 1, b);
    }

    /** The snapshot a peer took after applying seqs 0..2 (blocks 10 → 11 → 12). */
    private void installSnapshotAtSeq2() {
        List<PeerSnapshot.Event> events = List.of(
                new PeerSnapshot.Event(
                        WORKER, 0, storeBatch(0, 10, null).events().get(0)),
                new PeerSnapshot.Event(
                        WORKER, 0, storeBatch(1, 11, 10L).events().get(0)),
                new PeerSnapshot.Event(
                        WORKER, 0, storeBatch(2, 12, 11L).events().get(0)));
        partition.recover(new PeerSnapshot(events, List.of(new PeerSnapshot.StreamWatermark(WORKER, 0, 2)), true));
    }

    private int held() {
        return partition.index().heldBlocks(WORKER, 0, StorageTier.DEVICE);
    }

    @Test
    void bufferedBatchesAtOrBelowTheWatermarkAreStaleNotARestart() {
        open();
        installSnapshotAtSeq2();
        live(storeBatch(1, 11, 10L));
        live(storeBatch(2, 12, 11L));
        live(storeBatch(3, 13, 12L));
        assertEquals(0, counters.warningCount(WarningKind.ENGINE_RESTART));
        assertEquals(2, counters.warningCount(WarningKind.STALE_BATCH));
        assertEquals(4, held(), "the snapshot's three blocks and seq 3's");
        assertEquals(1, partition.index().copies(WORKER, 0, StorageTier.DEVICE, 11), "a stale batch is not re-applied");
        assertTrue(replays.isEmpty());
        assertTrue(partition.dumpJson().contains("\"watermarks\":[{\"worker_id\":7,\"dp_rank\":0,\"seq\":3}]"));
    }

    @Test
    void aHoleAfterTheWatermarkIsReplayedFromTheEngine() {
        open();
        installSnapshotAtSeq2();
        live(storeBatch(5, 15, 14L));
        assertEquals(1, replays.size());
        assertEquals(3, replays.get(0).start());
        assertEquals(5, replays.get(0).end());
    }

    @Test
    void aStreamRegisteredAfterTheInstallResumesFromItsSnapshotWatermark() {
        installSnapshotAtSeq2();
        assertTrue(
                partition.dumpJson().contains("\"watermarks\":[{\"worker_id\":7,\"dp_rank\":0,\"seq\":2}]"),
                "a third node recovering from this one gets the watermark of the blocks it holds");
        open();
        live(storeBatch(2, 12, 11L));
        live(storeBatch(3, 13, 12L));
        assertEquals(0, counters.warningCount(WarningKind.ENGINE_RESTART));
        assertEquals(4, held());
        assertTrue(replays.isEmpty());
    }

    @Test
    void withoutAnInstalledWatermarkAFirstSeqAtOrBelowTheOldOneIsStillARestart() {
        open();
        live(storeBatch(0, 10, null));
        live(storeBatch(1, 11, 10L));
        partition.openStream(new StreamSpec(WORKER, 0, 2, "tcp://engine:1"));
        partition.onLive(WORKER, 0, 2, storeBatch(0, 20, null));
        assertEquals(1, counters.warningCount(WarningKind.ENGINE_RESTART));
        assertEquals(1, held(), "the restarted engine's first block only");
    }

    @Test
    void aDynamoDumpHasNoWatermarksSoTheFirstLiveBatchOnlySetsOne() {
        open();
        partition.recover(new PeerSnapshot(
                List.of(new PeerSnapshot.Event(
                        WORKER, 0, storeBatch(0, 10, null).events().get(0))),
                List.of(),
                false));
        live(storeBatch(9, 11, 10L));
        assertTrue(replays.isEmpty());
        assertEquals(2, held());
    }
}
