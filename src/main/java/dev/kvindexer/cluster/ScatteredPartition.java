package dev.kvindexer.cluster;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.metrics.Spans;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.partition.PartitionStats;
import dev.kvindexer.partition.PartitionView;
import dev.kvindexer.partition.PeerSnapshot;
import dev.kvindexer.partition.PromptHashes;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.partition.RepairOutcome;
import dev.kvindexer.partition.RepairRequest;
import dev.kvindexer.partition.StandardEventsApplied;
import dev.kvindexer.partition.StreamSpec;
import dev.kvindexer.partition.TieredQueryResult;
import io.vertx.core.Future;
import java.util.List;

/**
 * A sharded partition as its callers see it: queries cover every instance of the cluster through
 * {@link ShardQueries}; everything else is the shards this node hosts.
 */
final class ScatteredPartition implements PartitionView {
    private final PartitionRef hosted;
    private final ShardQueries queries;

    ScatteredPartition(PartitionRef hosted, ShardQueries queries) {
        this.hosted = hosted;
        this.queries = queries;
    }

    @Override
    public PartitionRef hosted() {
        return hosted;
    }

    @Override
    public Future<QueryResult> query(long[] localHashes) {
        return queries.query(hosted, PromptHashes.LOCAL, localHashes);
    }

    @Override
    public Future<QueryResult> queryBySequenceHashes(long[] sequenceHashes) {
        return queries.query(hosted, PromptHashes.SEQUENCE, sequenceHashes);
    }

    @Override
    public Future<QueryResult> queryByEngineHashes(long[] engineHashes) {
        return queries.query(hosted, PromptHashes.ENGINE, engineHashes);
    }

    @Override
    public Future<TieredQueryResult> queryTiered(long[] localHashes) {
        return queries.queryTiered(hosted, localHashes);
    }

    /** Only the shards hosted here: a rank whose shard lives on another node holds nothing here. */
    @Override
    public Future<long[]> engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return hosted.engineHashes(workerId, dpRank, localHashes, maxBlocks);
    }

    @Override
    public PartitionKey key() {
        return hosted.key();
    }

    @Override
    public int blockSize() {
        return hosted.blockSize();
    }

    @Override
    public Future<Void> ready() {
        return hosted.ready();
    }

    @Override
    public Future<Void> openStream(StreamSpec stream) {
        return hosted.openStream(stream);
    }

    @Override
    public Future<Void> removeStreams(long workerId, int dpRank, boolean lastOfWorker) {
        return hosted.removeStreams(workerId, dpRank, lastOfWorker);
    }

    @Override
    public void applyLive(long workerId, int registeredRank, long generation, EventBatch batch, long heldBytes) {
        hosted.applyLive(workerId, registeredRank, generation, batch, heldBytes);
    }

    @Override
    public void applyLive(
            long workerId,
            int registeredRank,
            long generation,
            EventBatch batch,
            long heldBytes,
            Spans.BatchTrace trace) {
        hosted.applyLive(workerId, registeredRank, generation, batch, heldBytes, trace);
    }

    @Override
    public void applyReplayed(
            long workerId, int registeredRank, long generation, long replayId, EventBatch batch, long heldBytes) {
        hosted.applyReplayed(workerId, registeredRank, generation, replayId, batch, heldBytes);
    }

    @Override
    public void replayFinished(long workerId, int registeredRank, long generation, long replayId) {
        hosted.replayFinished(workerId, registeredRank, generation, replayId);
    }

    @Override
    public Future<Void> recover(PeerSnapshot snapshot) {
        return hosted.recover(snapshot);
    }

    @Override
    public Future<RepairOutcome> repair(RepairRequest request, PeerSnapshot peer) {
        return hosted.repair(request, peer);
    }

    @Override
    public Future<Void> repairFailed(RepairRequest request) {
        return hosted.repairFailed(request);
    }

    @Override
    public Future<StandardEventsApplied> applyStandard(List<StandardEvent> events) {
        return hosted.applyStandard(events);
    }

    /**
     * The whole partition, every instance of the cluster, as one node holding all would snapshot it; an instance no
     * live node could give is named as missing.
     */
    @Override
    public Future<PartitionSnapshot> snapshot(PartitionSnapshot.Order order) {
        return queries.whole(hosted).map(m -> m.snapshot(order));
    }

    @Override
    public Future<byte[]> snapshotOf(long[] workerIds) {
        return hosted.snapshotOf(workerIds);
    }

    @Override
    public Future<PartitionStats> stats() {
        return hosted.stats();
    }

    @Override
    public String toString() {
        return "sharded " + hosted;
    }
}
