package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.index.PartitionIndex;
import dev.kvindexer.index.StoreOutcome;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.WarningKind;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state one partition actor owns: the index and the open streams with their watermarks. Plain Java and
 * single-threaded; {@link PartitionVerticle} only adapts it to the event bus.
 */
public final class Partition {
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

    private final PartitionKey key;
    private final PartitionIndex index;
    private final EventCounters counters;
    private final Map<StreamKey, StreamState> streams = new HashMap<>();

    record StreamKey(long workerId, int dpRank) {
    }

    /** A registered stream: its listener generation and last applied seq (watermark). */
    static final class StreamState {
        final long generation;
        long watermark = -1;
        boolean hasWatermark;

        StreamState(long generation) {
            this.generation = generation;
        }
    }

    public Partition(PartitionKey key, int blockSize, EventCounters counters) {
        this.key = key;
        this.index = new PartitionIndex(blockSize);
        this.counters = counters;
    }

    public PartitionKey key() {
        return key;
    }

    public int blockSize() {
        return index.blockSize();
    }

    public PartitionIndex index() {
        return index;
    }

    public void openStream(PartitionMessages.OpenStream open) {
        streams.put(new StreamKey(open.workerId(), open.dpRank()), new StreamState(open.generation()));
    }

    /** Applies a batch if its stream is open in the same generation; returns whether it was applied. */
    public boolean apply(PartitionMessages.ApplyBatch msg) {
        StreamState stream = streams.get(new StreamKey(msg.workerId(), msg.registeredRank()));
        if (stream == null || stream.generation != msg.generation()) {
            // A batch still in flight when its registration went away; applying it would resurrect blocks.
            return false;
        }
        EventBatch batch = msg.batch();
        counters.warning(WarningKind.DECODE_ERROR, batch.malformedEvents());
        counters.warning(WarningKind.BLOCK_SIZE_MISMATCH, batch.blockSizeMismatches());
        counters.warning(WarningKind.FILTERED_GROUP, batch.filteredEvents());
        int rank = batch.effectiveRank(msg.registeredRank());
        for (KvEvent event : batch.events()) {
            applyEvent(msg.workerId(), rank, event);
        }
        stream.watermark = batch.seq();
        stream.hasWatermark = true;
        return true;
    }

    private void applyEvent(long workerId, int rank, KvEvent event) {
        if (event instanceof KvEvent.Stored) {
            KvEvent.Stored s = (KvEvent.Stored) event;
            StoreOutcome outcome = index.store(workerId, rank, s.tier(), s.hasParent(), s.parentHash(),
                    s.blockHashes(), s.tokensHashes());
            counters.applied("stored", outcome.label(), 1);
            if (outcome != StoreOutcome.OK && LOG.isDebugEnabled()) {
                LOG.debug("store skipped model={} tenant={} worker={} dp_rank={}: {}", key.modelName(),
                        key.tenantId(), Long.toUnsignedString(workerId), rank, outcome.label());
            }
        } else if (event instanceof KvEvent.Removed) {
            KvEvent.Removed r = (KvEvent.Removed) event;
            int missing = index.remove(workerId, rank, r.tier(), r.blockHashes());
            counters.applied("removed", missing == 0 ? "ok" : "block_not_found", 1);
        } else {
            index.clear(workerId, rank);
            counters.applied("cleared", "ok", 1);
        }
    }

    public void removeStreams(PartitionMessages.RemoveStreams msg) {
        if (msg.wholeWorker()) {
            streams.keySet().removeIf(k -> k.workerId() == msg.workerId());
            index.removeWorker(msg.workerId());
        } else {
            streams.remove(new StreamKey(msg.workerId(), msg.dpRank()));
            index.removeWorkerDpRank(msg.workerId(), msg.dpRank());
        }
    }

    public PartitionMessages.QueryReply query(PartitionMessages.Query query) {
        return new PartitionMessages.QueryReply(index.blockSize(), index.match(query.localHashes()));
    }

    /** The partition's /dump value. */
    public String dumpJson() {
        DumpWriter writer = new DumpWriter(index.blockSize());
        index.dump(writer);
        return writer.finish();
    }

    /** Watermark of a stream, or -1 when it has applied nothing (visible for tests and recovery). */
    public long watermark(long workerId, int dpRank) {
        StreamState s = streams.get(new StreamKey(workerId, dpRank));
        return s == null || !s.hasWatermark ? -1 : s.watermark;
    }
}
