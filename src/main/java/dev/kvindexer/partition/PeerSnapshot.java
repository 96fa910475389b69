package dev.kvindexer.partition;

import dev.kvindexer.event.KvEvent;
import java.util.List;

/**
 * A peer's dump of one partition, events applied in order. {@code exact} when the peer sent the watermark of every
 * stream (a kvindexer peer): streams then resume from those watermarks. Otherwise (a Dynamo peer) the partition
 * counts as bootstrapped and each stream takes its first live batch as is.
 */
public record PeerSnapshot(List<Event> events, List<StreamWatermark> watermarks, boolean exact) {
    public PeerSnapshot {
        events = List.copyOf(events);
        watermarks = List.copyOf(watermarks);
    }

    /** One event of the dump, for the owner (worker, dp_rank) that held it. */
    public record Event(long workerId, int dpRank, KvEvent event) {}

    /** The last applied seq of stream (worker, registered dp_rank) in the peer's snapshot. */
    public record StreamWatermark(long workerId, int dpRank, long seq) {}
}
