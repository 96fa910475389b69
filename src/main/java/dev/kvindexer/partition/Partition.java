package dev.kvindexer.partition;

import dev.kvindexer.config.InexactStreamPolicy;
import dev.kvindexer.dump.DumpWriter;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.event.WorkerRank;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.index.PartitionIndex;
import dev.kvindexer.index.StoreOutcome;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.metrics.LogThrottle;
import dev.kvindexer.metrics.WarningKind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state one partition actor owns: the index and the open streams with their sequencing. Plain Java and
 * single-threaded; {@link PartitionVerticle} only adapts it to the event bus. Its fields that are not private are
 * what its streams ({@link OpenStream}) use too.
 */
public final class Partition {
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

    private final PartitionKey key;
    final PartitionRef self;
    final PartitionIndex index;
    final EventCounters counters;
    final Watermarks watermarks;
    final Consumer<ReplayRequest> replays;
    final Consumer<RepairRequest> repairs;
    private final Map<WorkerRank, OpenStream> streams = new HashMap<>();
    /** Last applied event_id of each standardized event stream (POST /events), with the worker it belongs to. */
    private final Map<String, long[]> standardStreams = new HashMap<>();
    /** Watermarks of an exact snapshot for streams not registered here yet: their blocks are in the index. */
    private final Map<WorkerRank, Long> installedNotOpen = new HashMap<>();
    /** What each engine rank sent, by the rank its events name (not always the registered one). */
    private final Map<WorkerRank, EngineActivity> activity = new HashMap<>();

    private final LongSupplier clock;
    final InexactStreamPolicy inexactPolicy;
    private boolean bootstrapped;
    private final LogThrottle standardGapLog = new LogThrottle();

    /** {@code self} is the handle replayed batches are sent back to. */
    public Partition(
            PartitionKey key,
            int blockSize,
            PartitionRef self,
            EventCounters counters,
            Watermarks watermarks,
            Consumer<ReplayRequest> replays) {
        this(key, blockSize, self, counters, watermarks, replays, InexactStreamPolicy.KEEP, request -> {});
    }

    /**
     * {@code inexactPolicy}: what becomes of a stream's blocks when batches of it are lost for good; {@code repairs}:
     * where such a stream asks for a peer's copy of them.
     */
    public Partition(
            PartitionKey key,
            int blockSize,
            PartitionRef self,
            EventCounters counters,
            Watermarks watermarks,
            Consumer<ReplayRequest> replays,
            InexactStreamPolicy inexactPolicy,
            Consumer<RepairRequest> repairs) {
        this(key, blockSize, self, counters, watermarks, replays, inexactPolicy, repairs, System::currentTimeMillis);
    }

    /** {@code clock} gives wall-clock millis, for the age of each engine's last event. */
    Partition(
            PartitionKey key,
            int blockSize,
            PartitionRef self,
            EventCounters counters,
            Watermarks watermarks,
            Consumer<ReplayRequest> replays,
            InexactStreamPolicy inexactPolicy,
            Consumer<RepairRequest> repairs,
            LongSupplier clock) {
        this.clock = clock;
        this.repairs = repairs;
        this.inexactPolicy = inexactPolicy;
        this.key = key;
        this.self = self;
        this.index = new PartitionIndex(blockSize);
        this.counters = counters;
        this.watermarks = watermarks;
        this.replays = replays;
    }

    public PartitionKey key() {
        return key;
    }

    public PartitionIndex index() {
        return index;
    }

    public void openStream(StreamSpec open) {
        WorkerRank k = new WorkerRank(open.workerId(), open.dpRank());
        OpenStream s = streams.get(k);
        if (s == null) {
            s = new OpenStream(new StreamId(key, k.workerId(), k.dpRank()), this);
            streams.put(k, s);
            Long installed = installedNotOpen.remove(k);
            if (installed != null) {
                s.sequencer.installedFromPeer(installed);
            } else if (watermarks.of(s.id).isSet()) {
                // Re-registered after an unregister: the watermark survived, the stream's blocks did not.
                s.sequencer.blocksDropped();
            }
        }
        s.sequencer.open(open.generation(), open.replayEndpoint());
        s.forgetRepair(false);
        s.defaultLora = open.defaultLora();
        if (open.replayHistory()) {
            s.sequencer.replayHistory();
        }
        if (open.sharedStore()) {
            index.markSharedStore(open.workerId(), true);
        }
        if (bootstrapped) {
            s.sequencer.bootstrappedFromPeer();
        }
    }

    /**
     * Applies a peer's dump before any live batch of this node (the ready gate holds them back). An exact snapshot
     * sets every stream's watermark; a Dynamo dump has none, so streams take their first live batch as is.
     */
    public void recover(PeerSnapshot recovered) {
        for (PeerSnapshot.Event e : recovered.events()) {
            applyEvent(e.workerId(), e.dpRank(), e.event(), null);
        }
        if (!recovered.exact()) {
            bootstrapped = true;
            streams.values().forEach(st -> st.sequencer.bootstrappedFromPeer());
            return;
        }
        Map<WorkerRank, Long> losses = new HashMap<>();
        recovered.losses().forEach(l -> losses.merge(new WorkerRank(l.workerId(), l.dpRank()), l.batches(), Long::sum));
        for (PeerSnapshot.StreamWatermark w : recovered.watermarks()) {
            WorkerRank k = new WorkerRank(w.workerId(), w.dpRank());
            OpenStream s = streams.get(k);
            if (s != null && recovered.replayAtInstall()) {
                s.sequencer.installedFromSnapshot(w.seq());
                s.sequencer.replayHistory();
            } else if (s != null) {
                s.sequencer.installedFromPeer(w.seq());
            } else {
                installedNotOpen.put(k, w.seq());
            }
            watermarks.of(streamId(k)).exactAgain(losses.getOrDefault(k, 0L));
        }
    }

    private StreamId streamId(WorkerRank k) {
        return new StreamId(key, k.workerId(), k.dpRank());
    }

    /** A live batch; dropped when its stream is closed or belongs to an older listener generation. */
    public void onLive(long workerId, int registeredRank, long generation, EventBatch batch) {
        OpenStream s = stream(workerId, registeredRank, generation);
        if (s != null) {
            s.sequencer.onLive(batch);
        }
    }

    public void onReplayed(long workerId, int registeredRank, long generation, long replayId, EventBatch batch) {
        OpenStream s = stream(workerId, registeredRank, generation);
        if (s != null) {
            s.sequencer.onReplayed(replayId, batch);
        }
    }

    public void onReplayFinished(long workerId, int registeredRank, long generation, long replayId) {
        OpenStream s = stream(workerId, registeredRank, generation);
        if (s != null) {
            s.sequencer.onReplayFinished(replayId);
            s.askPending();
        }
    }

    /**
     * Replaces the blocks of a stream that lost batches for good with a peer's exact copy of them ({@code peer}, limited
     * to that stream), and makes it exact again. The copy must cover the gap the request names and hold the stream
     * without a loss; when this node had applied more than the copy, the engine replays the difference, so a stream
     * without a replay endpoint takes only a copy at least as new as its own.
     */
    public RepairOutcome repair(RepairRequest request, PeerSnapshot peer) {
        StreamId id = request.stream();
        OpenStream s = stream(id.workerId(), id.dpRank(), request.generation());
        if (s == null || !s.repairInFlight || s.repairId != request.repairId()) {
            return RepairOutcome.OUTDATED;
        }
        Watermarks.Watermark mark = s.sequencer.watermark();
        if (mark.exact()) {
            s.repairEnded(true);
            return RepairOutcome.OUTDATED;
        }
        Long seq = peer.exactWatermark(id.workerId(), id.dpRank());
        if (seq == null
                || Long.compareUnsigned(seq, request.lastLost()) < 0
                || s.sequencer.replayEndpoint() == null && mark.isSet() && Long.compareUnsigned(seq, mark.seq()) < 0) {
            return RepairOutcome.BEHIND;
        }
        index.removeWorkerDpRank(id.workerId(), id.dpRank());
        for (PeerSnapshot.Event e : peer.events()) {
            if (e.workerId() == id.workerId() && e.dpRank() == id.dpRank()) {
                applyEvent(e.workerId(), e.dpRank(), e.event(), null);
            }
        }
        s.sequencer.repairedFromPeer(seq);
        mark.exactAgain(0);
        s.repairEnded(true);
        return RepairOutcome.REPAIRED;
    }

    /** No peer could repair {@code request}'s stream: a gap it lost meanwhile may now be asked for. */
    public void repairFailed(RepairRequest request) {
        StreamId id = request.stream();
        OpenStream s = stream(id.workerId(), id.dpRank(), request.generation());
        if (s != null && s.repairInFlight && s.repairId == request.repairId()) {
            s.repairEnded(false);
        }
    }

    private OpenStream stream(long workerId, int dpRank, long generation) {
        OpenStream s = streams.get(new WorkerRank(workerId, dpRank));
        // A batch still in flight when its registration went away would resurrect blocks: drop it.
        return s != null && s.sequencer.generation() == generation ? s : null;
    }

    /** The activity record of an engine rank, made on its first stream or event. */
    EngineActivity activityOf(long workerId, int rank) {
        return activity.computeIfAbsent(new WorkerRank(workerId, rank), k -> new EngineActivity(clock.getAsLong()));
    }

    void applyBatch(long workerId, int rank, EventBatch batch, EngineActivity engine) {
        counters.undecodable(EventCounters.UNDECODABLE_EVENT, batch.malformedEvents());
        counters.warning(WarningKind.BLOCK_SIZE_MISMATCH, batch.blockSizeMismatches());
        counters.warning(WarningKind.FILTERED_GROUP, batch.filteredEvents());
        for (KvEvent event : batch.events()) {
            applyEvent(workerId, rank, event, engine);
        }
        if (!batch.events().isEmpty()) {
            engine.spoke(clock.getAsLong());
        }
    }

    /** {@code engine} is the sender's activity record, or null for events that no engine sent now (recovery). */
    private void applyEvent(long workerId, int rank, KvEvent event, EngineActivity engine) {
        if (event instanceof KvEvent.Stored s) {
            StoreOutcome outcome = index.store(
                    workerId, rank, s.tier(), s.hasParent(), s.parentHash(), s.blockHashes(), s.tokensHashes());
            stored(workerId, rank, outcome, engine, s.size());
        } else if (event instanceof KvEvent.StoredBySequence s) {
            StoreOutcome outcome =
                    index.storeBySequence(workerId, rank, s.tier(), s.hasParent(), s.parentHash(), s.sequenceHashes());
            stored(workerId, rank, outcome, engine, s.sequenceHashes().length);
        } else if (event instanceof KvEvent.Removed r) {
            int missing = index.remove(workerId, rank, r.tier(), r.blockHashes());
            counters.applied("removed", missing == 0 ? "ok" : "block_not_found", 1);
            if (engine != null) {
                engine.removed(r.blockHashes().length - missing);
            }
        } else {
            index.clear(workerId, rank);
            counters.applied("cleared", "ok", 1);
            if (engine != null) {
                engine.cleared();
            }
        }
    }

    private void stored(long workerId, int rank, StoreOutcome outcome, EngineActivity engine, int blocks) {
        counters.applied("stored", outcome.label(), 1);
        if (engine != null) {
            engine.stored(outcome == StoreOutcome.OK ? blocks : 0);
        }
        if (outcome != StoreOutcome.OK && LOG.isDebugEnabled()) {
            LOG.debug(
                    "store skipped model={} tenant={} worker={} dp_rank={}: {}",
                    key.modelName(),
                    key.routingGroup(),
                    Long.toUnsignedString(workerId),
                    rank,
                    outcome.label());
        }
    }

    /**
     * Standardized KV events (docs/protocol/events.md#standardized-kv-events): within a stream, an event_id at or below
     * the last applied one is dropped as
     * stale, and the ids skipped before a newer one are counted as a gap. Nothing can replay them (no replay protocol
     * exists for these events), so the gap is reported, and the event applies.
     */
    public StandardEventsApplied applyStandard(List<StandardEvent> events) {
        int applied = 0;
        int stale = 0;
        long gaps = 0;
        for (StandardEvent e : events) {
            long[] last = standardStreams.get(e.stream());
            if (last != null && Long.compareUnsigned(e.eventId(), last[1]) <= 0) {
                stale++;
                continue;
            }
            if (last != null && e.eventId() - last[1] > 1) {
                gaps += e.eventId() - last[1] - 1;
                counters.gap(EventCounters.GAP_EVENT_ID);
            }
            if (last == null) {
                standardStreams.put(e.stream(), new long[] {e.workerId(), e.eventId()});
            } else {
                last[1] = e.eventId();
            }
            EngineActivity engine = activityOf(e.workerId(), e.dpRank());
            applyEvent(e.workerId(), e.dpRank(), e.event(), engine);
            engine.spoke(clock.getAsLong());
            applied++;
        }
        counters.warning(WarningKind.STALE_EVENT, stale);
        counters.warning(WarningKind.EVENT_ID_GAP, gaps);
        if (gaps > 0 && standardGapLog.admit()) {
            LOG.warn(
                    "standardized events of model={} tenant={}: {} event_ids missing{}",
                    key.modelName(),
                    key.routingGroup(),
                    gaps,
                    standardGapLog.heldBackNote());
        }
        return new StandardEventsApplied(applied, stale, gaps);
    }

    /** Unregistration: the streams close (their watermarks stay in {@link Watermarks}) and their blocks go. */
    public void removeStreams(long workerId, int dpRank, boolean lastOfWorker) {
        // The blocks go: nothing of the stream is held inexactly any more.
        streams.forEach((k, s) -> {
            if (k.workerId() == workerId && (dpRank < 0 || lastOfWorker || k.dpRank() == dpRank)) {
                s.sequencer.watermark().exactAgain(0);
            }
        });
        if (dpRank < 0 || lastOfWorker) {
            streams.keySet().removeIf(k -> k.workerId() == workerId);
            installedNotOpen.keySet().removeIf(k -> k.workerId() == workerId);
            standardStreams.values().removeIf(v -> v[0] == workerId);
            activity.keySet().removeIf(k -> k.workerId() == workerId);
            index.removeWorker(workerId);
            index.markSharedStore(workerId, false);
        } else {
            streams.remove(new WorkerRank(workerId, dpRank));
            installedNotOpen.remove(new WorkerRank(workerId, dpRank));
            activity.remove(new WorkerRank(workerId, dpRank));
            index.removeWorkerDpRank(workerId, dpRank);
        }
    }

    public TieredQueryResult tieredQuery(long[] localHashes) {
        return new TieredQueryResult(index.blockSize(), index.matchTiered(localHashes));
    }

    public long[] engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return index.engineHashes(workerId, dpRank, localHashes, maxBlocks);
    }

    /** A token query's match, its hashes computed as the walk reaches them. */
    public QueryResult query(LocalHashes localHashes) {
        PartitionIndex.Reach reach = index.matchLazily(localHashes);
        return new QueryResult(index.blockSize(), reach.matches(), reach.sharedReach());
    }

    /** A prompt's match, whatever its hashes name. */
    public QueryResult query(long[] hashes, PromptHashes kind) {
        long[] local = switch (kind) {
            case LOCAL -> hashes;
            case SEQUENCE -> index.localHashesOfSequence(hashes);
            case ENGINE -> index.localHashesOfEngineHashes(hashes);
        };
        long[] seq = kind == PromptHashes.SEQUENCE ? hashes : index.sequenceHashesFor(local);
        return new QueryResult(index.blockSize(), index.matchOwners(local, seq), index.sharedReach(local, seq));
    }

    public PartitionStats stats() {
        StorageTier[] tiers = StorageTier.values();
        long[] held = new long[tiers.length];
        for (StorageTier t : tiers) {
            held[t.ordinal()] = index.heldBlocks(t);
        }
        Map<WorkerRank, EngineActivity> ordered = new TreeMap<>();
        ordered.putAll(activity);
        List<PartitionStats.Engine> engines = new ArrayList<>(ordered.size());
        ordered.forEach((k, a) -> {
            long[] engineHeld = new long[tiers.length];
            for (StorageTier t : tiers) {
                engineHeld[t.ordinal()] = index.heldBlocks(k.workerId(), k.dpRank(), t);
            }
            engines.add(new PartitionStats.Engine(
                    k.workerId(),
                    k.dpRank(),
                    engineHeld,
                    a.storedBlocks,
                    a.removedBlocks,
                    a.events,
                    a.lastEventMillis));
        });
        return new PartitionStats(held, index.blockCount(), index.memoryBytes(), engines);
    }

    /**
     * The partition's /dump value: an exact snapshot, because the actor takes it in one step together with the
     * watermark of every stream whose blocks it holds.
     */
    public String dumpJson() {
        DumpWriter writer = new DumpWriter(index.blockSize());
        index.dump(writer);
        watermarks().forEach((k, seq) -> writer.watermark(k.workerId(), k.dpRank(), seq));
        return writer.finish();
    }

    /** The same exact snapshot as {@link #dumpJson()} in the binary form nodes recover from. */
    public byte[] snapshot() {
        return snapshot(PartitionSnapshot.Order.DEPTH_FIRST);
    }

    /** {@link #snapshot()} with the device tree reported in {@code order}. */
    public byte[] snapshot(PartitionSnapshot.Order order) {
        SnapshotWriter writer = new SnapshotWriter();
        index.dump(writer, order == PartitionSnapshot.Order.DEPTH_FIRST);
        writeWatermarks(writer, worker -> true);
        return writer.finish();
    }

    /** {@link #snapshot()} of the given instances only: their blocks, and the watermarks of their streams. */
    public byte[] snapshotOf(long[] workerIds) {
        Set<Long> only = new HashSet<>();
        for (long w : workerIds) {
            only.add(w);
        }
        SnapshotWriter writer = new SnapshotWriter();
        index.dump(new InstancesOnly(only, writer), true);
        writeWatermarks(writer, only::contains);
        return writer.finish();
    }

    /** The watermarks of the streams of the workers {@code of} accepts, each followed by its loss if it has one. */
    private void writeWatermarks(SnapshotWriter writer, java.util.function.LongPredicate of) {
        watermarks().forEach((k, seq) -> {
            if (of.test(k.workerId())) {
                writer.watermark(k.workerId(), k.dpRank(), seq);
                Watermarks.Watermark w = watermarks.find(streamId(k));
                if (w != null && !w.exact()) {
                    writer.loss(k.workerId(), k.dpRank(), w.lostBatches());
                }
            }
        });
    }

    /** The watermark of every stream whose blocks the partition holds, in stream order. */
    private Map<WorkerRank, Long> watermarks() {
        Map<WorkerRank, Long> marks = new TreeMap<>();
        marks.putAll(installedNotOpen);
        streams.forEach((k, s) -> {
            Watermarks.Watermark w = s.sequencer.watermark();
            if (w.isSet()) {
                marks.put(k, w.seq());
            }
        });
        return marks;
    }
}
