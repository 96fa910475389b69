package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A partition handle whose reads and changes are spans of the request that asked for them (a match, a stream opened,
 * a snapshot...), around the handle callers had before: the one callers get while tracing is on.
 */
public final class TracedPartition implements PartitionView {
    private final PartitionRef inner;
    private final Spans spans;

    public TracedPartition(PartitionRef inner, Spans spans) {
        this.inner = inner;
        this.spans = spans;
    }

    private <T> Future<T> traced(String what, Consumer<Spans.Tags> tags, Supplier<Future<T>> work) {
        return spans.around(
                "partition." + what,
                b -> {
                    b.put("kvindexer.partition", inner.key().dumpKey());
                    tags.accept(b);
                },
                work);
    }

    private <T> Future<T> traced(String what, Supplier<Future<T>> work) {
        return traced(what, b -> {}, work);
    }

    private Future<QueryResult> match(PromptHashes kind, long[] hashes, Supplier<Future<QueryResult>> work) {
        return traced(
                "query",
                b -> b.put("kvindexer.hashes", kind.name().toLowerCase(java.util.Locale.ROOT))
                        .put("kvindexer.blocks", hashes.length),
                work);
    }

    @Override
    public PartitionRef hosted() {
        return PartitionView.hostedOf(inner);
    }

    @Override
    public PartitionKey key() {
        return inner.key();
    }

    @Override
    public int blockSize() {
        return inner.blockSize();
    }

    @Override
    public Future<Void> ready() {
        return inner.ready();
    }

    @Override
    public Future<Void> openStream(StreamSpec stream) {
        return traced("open_stream", () -> inner.openStream(stream));
    }

    @Override
    public Future<Void> removeStreams(long workerId, int dpRank, boolean lastOfWorker) {
        return traced("remove_streams", () -> inner.removeStreams(workerId, dpRank, lastOfWorker));
    }

    @Override
    public void applyLive(long workerId, int registeredRank, long generation, EventBatch batch, long heldBytes) {
        inner.applyLive(workerId, registeredRank, generation, batch, heldBytes);
    }

    @Override
    public void applyLive(
            long workerId,
            int registeredRank,
            long generation,
            EventBatch batch,
            long heldBytes,
            Spans.BatchTrace trace) {
        inner.applyLive(workerId, registeredRank, generation, batch, heldBytes, trace);
    }

    @Override
    public void applyReplayed(
            long workerId, int registeredRank, long generation, long replayId, EventBatch batch, long heldBytes) {
        inner.applyReplayed(workerId, registeredRank, generation, replayId, batch, heldBytes);
    }

    @Override
    public void replayFinished(long workerId, int registeredRank, long generation, long replayId) {
        inner.replayFinished(workerId, registeredRank, generation, replayId);
    }

    @Override
    public Future<Void> recover(PeerSnapshot snapshot) {
        return traced("recover", () -> inner.recover(snapshot));
    }

    @Override
    public Future<RepairOutcome> repair(RepairRequest request, PeerSnapshot peer) {
        return traced("repair", () -> inner.repair(request, peer));
    }

    @Override
    public Future<Void> repairFailed(RepairRequest request) {
        return inner.repairFailed(request);
    }

    @Override
    public Future<QueryResult> query(long[] localHashes) {
        return match(PromptHashes.LOCAL, localHashes, () -> inner.query(localHashes));
    }

    @Override
    public Future<QueryResult> queryBySequenceHashes(long[] sequenceHashes) {
        return match(PromptHashes.SEQUENCE, sequenceHashes, () -> inner.queryBySequenceHashes(sequenceHashes));
    }

    @Override
    public Future<QueryResult> queryByEngineHashes(long[] engineHashes) {
        return match(PromptHashes.ENGINE, engineHashes, () -> inner.queryByEngineHashes(engineHashes));
    }

    @Override
    public Future<QueryResult> query(PromptHashes kind, long[] hashes) {
        return match(kind, hashes, () -> inner.query(kind, hashes));
    }

    @Override
    public Future<TieredQueryResult> queryTiered(long[] localHashes) {
        return traced(
                "query_tiered",
                b -> b.put("kvindexer.blocks", localHashes.length),
                () -> inner.queryTiered(localHashes));
    }

    @Override
    public Future<long[]> engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return traced("engine_hashes", () -> inner.engineHashes(workerId, dpRank, localHashes, maxBlocks));
    }

    @Override
    public Future<StandardEventsApplied> applyStandard(List<StandardEvent> events) {
        return traced(
                "apply_standard", b -> b.put("kvindexer.events", events.size()), () -> inner.applyStandard(events));
    }

    @Override
    public Future<PartitionSnapshot> snapshot(PartitionSnapshot.Order order) {
        return traced("snapshot", () -> inner.snapshot(order));
    }

    @Override
    public Future<byte[]> snapshotOf(long[] workerIds) {
        return traced("snapshot_of", () -> inner.snapshotOf(workerIds));
    }

    @Override
    public Future<PartitionStats> stats() {
        return inner.stats();
    }

    @Override
    public String toString() {
        return "traced " + inner;
    }
}
