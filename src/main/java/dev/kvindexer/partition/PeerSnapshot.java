package dev.kvindexer.partition;

import dev.kvindexer.event.KvEvent;
import java.util.List;

/**
 * A peer's dump of one partition, events applied in order. {@code exact} when the peer sent the watermark of every
 * stream (a kvindexer peer): streams then resume from those watermarks. Otherwise (a Dynamo peer) the partition
 * counts as bootstrapped and each stream takes its first live batch as is.
 *
 * @param losses          streams whose blocks the peer held inexactly (batches it lost for good)
 * @param replayAtInstall ask each stream's engine at once for what it published after the watermark, rather than
 *                        wait for a live batch to show the gap: the snapshot is old (a node's own data directory)
 */
public record PeerSnapshot(
        List<Event> events,
        List<StreamWatermark> watermarks,
        boolean exact,
        List<StreamLoss> losses,
        boolean replayAtInstall) {
    public PeerSnapshot {
        events = List.copyOf(events);
        watermarks = List.copyOf(watermarks);
        losses = List.copyOf(losses);
    }

    /** A live peer's snapshot: nothing lost, nothing to replay at once. */
    public PeerSnapshot(List<Event> events, List<StreamWatermark> watermarks, boolean exact) {
        this(events, watermarks, exact, List.of(), false);
    }

    /** This snapshot, installed with a replay of every stream from its watermark (an old snapshot). */
    public PeerSnapshot replayingAtInstall() {
        return new PeerSnapshot(events, watermarks, exact, losses, true);
    }

    /**
     * This snapshot limited to one stream: the events held by (worker, dp_rank), its watermark and its loss. Blocks an
     * engine stored under a rank other than its registered one stay out.
     */
    public PeerSnapshot ofStream(long workerId, int dpRank) {
        return new PeerSnapshot(
                events.stream()
                        .filter(e -> e.workerId() == workerId && e.dpRank() == dpRank)
                        .toList(),
                watermarks.stream()
                        .filter(w -> w.workerId() == workerId && w.dpRank() == dpRank)
                        .toList(),
                exact,
                losses.stream()
                        .filter(l -> l.workerId() == workerId && l.dpRank() == dpRank)
                        .toList(),
                false);
    }

    /**
     * The watermark of stream (worker, dp_rank) when the peer held it exactly (no loss recorded), else null: only such
     * a copy can stand in for this node's.
     */
    public Long exactWatermark(long workerId, int dpRank) {
        if (!exact || losses.stream().anyMatch(l -> l.workerId() == workerId && l.dpRank() == dpRank)) {
            return null;
        }
        return watermarks.stream()
                .filter(w -> w.workerId() == workerId && w.dpRank() == dpRank)
                .map(StreamWatermark::seq)
                .findFirst()
                .orElse(null);
    }

    /** One event of the dump, for the owner (worker, dp_rank) that held it. */
    public record Event(long workerId, int dpRank, KvEvent event) {}

    /** The last applied seq of stream (worker, registered dp_rank) in the peer's snapshot. */
    public record StreamWatermark(long workerId, int dpRank, long seq) {}

    /** Stream (worker, registered dp_rank) had lost {@code batches} batches for good in the peer's index. */
    public record StreamLoss(long workerId, int dpRank, long batches) {}
}
