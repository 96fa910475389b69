package dev.kvindexer.recovery;

import dev.kvindexer.dump.DumpHandler;
import dev.kvindexer.dump.SnapshotReader;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.partition.PeerSnapshot;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Collects a peer's dump or snapshot, partition by partition, into what {@link PeerSnapshot} installs: events in
 * order, each block's further copies after every event of the document, and the streams' watermarks.
 */
public final class SnapshotCollector implements DumpHandler {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotCollector.class);

    /** One partition of the document. */
    static final class Collected {
        int blockSize;
        final List<PeerSnapshot.Event> events = new ArrayList<>();
        final List<PeerSnapshot.Event> extraCopies = new ArrayList<>();
        final List<PeerSnapshot.StreamWatermark> watermarks = new ArrayList<>();
        final List<PeerSnapshot.StreamLoss> losses = new ArrayList<>();
        boolean exact;
        /** Events of the document: ref_counts and a snapshot's copies name these by place. */
        int documentEvents;

        /** The snapshot to install: the copies go after every event of the document. */
        PeerSnapshot snapshot() {
            return snapshot(worker -> true);
        }

        /** {@link #snapshot()} of each worker with a record in the partition, split in one pass over the records. */
        Map<Long, PeerSnapshot> byWorker() {
            Map<Long, List<PeerSnapshot.Event>> events = new LinkedHashMap<>();
            Map<Long, List<PeerSnapshot.StreamWatermark>> marks = new HashMap<>();
            Map<Long, List<PeerSnapshot.StreamLoss>> lost = new HashMap<>();
            for (PeerSnapshot.Event e : this.events) {
                events.computeIfAbsent(e.workerId(), w -> new ArrayList<>()).add(e);
            }
            for (PeerSnapshot.Event e : extraCopies) {
                events.computeIfAbsent(e.workerId(), w -> new ArrayList<>()).add(e);
            }
            for (PeerSnapshot.StreamWatermark w : watermarks) {
                events.computeIfAbsent(w.workerId(), k -> new ArrayList<>());
                marks.computeIfAbsent(w.workerId(), k -> new ArrayList<>()).add(w);
            }
            for (PeerSnapshot.StreamLoss l : losses) {
                lost.computeIfAbsent(l.workerId(), k -> new ArrayList<>()).add(l);
            }
            Map<Long, PeerSnapshot> out = new LinkedHashMap<>();
            events.forEach((worker, list) -> out.put(
                    worker,
                    new PeerSnapshot(
                            list,
                            marks.getOrDefault(worker, List.of()),
                            exact,
                            lost.getOrDefault(worker, List.of()),
                            false)));
            return out;
        }

        /** {@link #snapshot()} of the workers {@code keep} accepts only. */
        PeerSnapshot snapshot(LongPredicate keep) {
            List<PeerSnapshot.Event> all = new ArrayList<>(events.size() + extraCopies.size());
            events.stream().filter(e -> keep.test(e.workerId())).forEach(all::add);
            extraCopies.stream().filter(e -> keep.test(e.workerId())).forEach(all::add);
            return new PeerSnapshot(
                    all,
                    watermarks.stream().filter(w -> keep.test(w.workerId())).toList(),
                    exact,
                    losses.stream().filter(l -> keep.test(l.workerId())).toList(),
                    false);
        }
    }

    private final String source;
    private final Map<PartitionKey, Collected> partitions = new LinkedHashMap<>();
    private Collected current;

    /** {@code source} names the peer in log lines. */
    SnapshotCollector(String source) {
        this.source = source;
    }

    /**
     * The exact section of {@code key} in a snapshot document of at most {@code maxBytes}, as a peer sent it;
     * fails when the document is malformed or has no exact section for it.
     */
    public static PeerSnapshot exactSection(String source, PartitionKey key, byte[] document, long maxBytes)
            throws IOException {
        SnapshotCollector collector = new SnapshotCollector(source);
        SnapshotReader.read(new ByteArrayInputStream(document), maxBytes, collector);
        Collected c = collector.partitions().get(key);
        if (c == null || !c.exact) {
            throw new IOException("the snapshot of " + source + " lacks an exact section for " + key.dumpKey());
        }
        return c.snapshot();
    }

    Map<PartitionKey, Collected> partitions() {
        return partitions;
    }

    @Override
    public void partition(PartitionKey key, int blockSize) {
        current = partitions.computeIfAbsent(key, k -> new Collected());
        current.blockSize = blockSize;
    }

    @Override
    public void event(long workerId, int dpRank, KvEvent event) {
        current.events.add(new PeerSnapshot.Event(workerId, dpRank, event));
        current.documentEvents++;
    }

    @Override
    public void copies(int eventIndex, int copies) throws IOException {
        if (eventIndex >= current.documentEvents) {
            throw new IOException("ref_counts names event " + eventIndex + " of " + current.documentEvents);
        }
        // Storing the same block again is what raises its count (docs/protocol/events.md#same-hash-stored-twice). A
        // snapshot's copies come between its
        // events, which they name by place; they are applied after every event of the document.
        PeerSnapshot.Event e = current.events.get(eventIndex);
        for (int i = 1; i < copies; i++) {
            current.extraCopies.add(e);
        }
    }

    @Override
    public void exactSnapshot() {
        current.exact = true;
    }

    @Override
    public void watermark(long workerId, int dpRank, long seq) {
        current.watermarks.add(new PeerSnapshot.StreamWatermark(workerId, dpRank, seq));
    }

    @Override
    public void loss(long workerId, int dpRank, long batches) {
        current.losses.add(new PeerSnapshot.StreamLoss(workerId, dpRank, batches));
    }

    @Override
    public void partitionFailed(PartitionKey key, String error) {
        LOG.warn("peer {} could not dump {}: {}", source, key.dumpKey(), error);
    }
}
