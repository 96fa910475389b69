package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import java.util.List;

/**
 * A handle over another that forwards every operation to it: what a view overrides is what it does differently (a
 * sharded partition's queries, a traced partition's spans). {@link #query(PromptHashes, long[])} is left to dispatch
 * to the three kinds, so a view that overrides those has them called.
 */
public abstract class ForwardingPartition implements PartitionView {
    protected final PartitionRef inner;

    protected ForwardingPartition(PartitionRef inner) {
        this.inner = inner;
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
        return inner.openStream(stream);
    }

    @Override
    public Future<Void> removeStreams(long workerId, int dpRank, boolean lastOfWorker) {
        return inner.removeStreams(workerId, dpRank, lastOfWorker);
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
        return inner.recover(snapshot);
    }

    @Override
    public Future<RepairOutcome> repair(RepairRequest request, PeerSnapshot peer) {
        return inner.repair(request, peer);
    }

    @Override
    public Future<Void> repairFailed(RepairRequest request) {
        return inner.repairFailed(request);
    }

    @Override
    public Future<QueryResult> query(long[] localHashes) {
        return inner.query(localHashes);
    }

    @Override
    public Future<QueryResult> queryBySequenceHashes(long[] sequenceHashes) {
        return inner.queryBySequenceHashes(sequenceHashes);
    }

    @Override
    public Future<QueryResult> queryByEngineHashes(long[] engineHashes) {
        return inner.queryByEngineHashes(engineHashes);
    }

    @Override
    public Future<TieredQueryResult> queryTiered(long[] localHashes) {
        return inner.queryTiered(localHashes);
    }

    @Override
    public Future<long[]> engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return inner.engineHashes(workerId, dpRank, localHashes, maxBlocks);
    }

    @Override
    public Future<StandardEventsApplied> applyStandard(List<StandardEvent> events) {
        return inner.applyStandard(events);
    }

    @Override
    public Future<PartitionSnapshot> snapshot(PartitionSnapshot.Order order) {
        return inner.snapshot(order);
    }

    @Override
    public Future<byte[]> snapshotOf(long[] workerIds) {
        return inner.snapshotOf(workerIds);
    }

    @Override
    public Future<PartitionStats> stats() {
        return inner.stats();
    }
}
