package dev.kvindexer.partition;

import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A partition handle whose reads and changes are spans of the request that asked for them (a match, a stream opened,
 * a snapshot...), around another handle: the one callers get while tracing is on.
 */
public final class TracedPartition extends ForwardingPartition {
    private final Spans spans;

    public TracedPartition(PartitionRef inner, Spans spans) {
        super(inner);
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

    private Future<QueryResult> match(PromptHashes kind, int blocks, Supplier<Future<QueryResult>> work) {
        return traced(
                "query",
                b -> b.put("kvindexer.hashes", kind.name().toLowerCase(java.util.Locale.ROOT))
                        .put("kvindexer.blocks", blocks),
                work);
    }

    @Override
    public Future<Void> openStream(StreamSpec stream) {
        return traced("open_stream", () -> super.openStream(stream));
    }

    @Override
    public Future<Void> removeStreams(long workerId, int dpRank, boolean lastOfWorker) {
        return traced("remove_streams", () -> super.removeStreams(workerId, dpRank, lastOfWorker));
    }

    @Override
    public Future<Void> recover(PeerSnapshot snapshot) {
        return traced("recover", () -> super.recover(snapshot));
    }

    @Override
    public Future<RepairOutcome> repair(RepairRequest request, PeerSnapshot peer) {
        return traced("repair", () -> super.repair(request, peer));
    }

    @Override
    public Future<QueryResult> query(long[] localHashes) {
        return match(PromptHashes.LOCAL, localHashes.length, () -> super.query(localHashes));
    }

    @Override
    public Future<QueryResult> query(LocalHashes localHashes) {
        return match(PromptHashes.LOCAL, localHashes.length(), () -> inner.query(localHashes));
    }

    @Override
    public Future<QueryResult> queryBySequenceHashes(long[] sequenceHashes) {
        return match(PromptHashes.SEQUENCE, sequenceHashes.length, () -> super.queryBySequenceHashes(sequenceHashes));
    }

    @Override
    public Future<QueryResult> queryByEngineHashes(long[] engineHashes) {
        return match(PromptHashes.ENGINE, engineHashes.length, () -> super.queryByEngineHashes(engineHashes));
    }

    @Override
    public Future<TieredQueryResult> queryTiered(long[] localHashes) {
        return traced(
                "query_tiered",
                b -> b.put("kvindexer.blocks", localHashes.length),
                () -> super.queryTiered(localHashes));
    }

    @Override
    public Future<long[]> engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        return traced("engine_hashes", () -> super.engineHashes(workerId, dpRank, localHashes, maxBlocks));
    }

    @Override
    public Future<StandardEventsApplied> applyStandard(List<StandardEvent> events) {
        return traced(
                "apply_standard", b -> b.put("kvindexer.events", events.size()), () -> super.applyStandard(events));
    }

    @Override
    public Future<PartitionSnapshot> snapshot(PartitionSnapshot.Order order) {
        return traced("snapshot", () -> super.snapshot(order));
    }

    @Override
    public Future<byte[]> snapshotOf(long[] workerIds) {
        return traced("snapshot_of", () -> super.snapshotOf(workerIds));
    }

    @Override
    public String toString() {
        return "traced " + inner;
    }
}
