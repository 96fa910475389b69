package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.metrics.Spans;
import io.vertx.core.Future;
import java.util.List;

/**
 * A handle on one partition: every caller outside this package reaches a partition only through these operations,
 * never through its messages. Requests wait until the partition is ready; one removed meanwhile fails with
 * {@link PartitionGoneException}. The handle names no node, so an implementation that reaches a partition on another
 * member over the clustered event bus can stand in without any caller changing.
 */
public interface PartitionRef {
    PartitionKey key();

    int blockSize();

    /** Completes once the partition accepts commands. */
    Future<Void> ready();

    /** A listener generation of a stream starts (registration or resume); batches of older generations drop. */
    Future<Void> openStream(StreamSpec stream);

    /**
     * Unregistration of one rank ({@code dpRank >= 0}) or of the whole worker ({@code dpRank < 0} or
     * {@code lastOfWorker}): the streams close and their blocks go.
     */
    Future<Void> removeStreams(long workerId, int dpRank, boolean lastOfWorker);

    /**
     * A decoded live batch of stream (workerId, registeredRank) from listener {@code generation}; fire and forget.
     * Counted in flight until the partition takes it, so ingest reads no further than partitions keep up; the
     * {@code heldBytes} of the network budget its message holds are given back then. {@code trace} is the batch's
     * trace when it was sampled for tracing (the partition's apply becomes a span of it), else null.
     */
    void applyLive(
            long workerId,
            int registeredRank,
            long generation,
            EventBatch batch,
            long heldBytes,
            Spans.BatchTrace trace);

    /** {@link #applyLive} for a batch not sampled for tracing. */
    default void applyLive(long workerId, int registeredRank, long generation, EventBatch batch, long heldBytes) {
        applyLive(workerId, registeredRank, generation, batch, heldBytes, null);
    }

    /**
     * A batch that replay {@code replayId} fetched from the engine, in seq order; fire and forget. Counted in flight
     * as a live batch is, with the {@code heldBytes} of the budget its message holds.
     */
    void applyReplayed(
            long workerId, int registeredRank, long generation, long replayId, EventBatch batch, long heldBytes);

    /** Replay {@code replayId} has ended: every batch it fetched was sent before this. */
    void replayFinished(long workerId, int registeredRank, long generation, long replayId);

    /** Applies a peer's dump of this partition before any live batch. */
    Future<Void> recover(PeerSnapshot snapshot);

    /**
     * Offers a peer's exact copy of the stream {@code request} asks to repair; the partition takes it only if it covers
     * what the stream lost and nothing made the request outdated meanwhile.
     */
    Future<RepairOutcome> repair(RepairRequest request, PeerSnapshot peer);

    /** No peer could repair {@code request}'s stream: it keeps its hole, and may ask again for a later one. */
    Future<Void> repairFailed(RepairRequest request);

    /** Matches a prompt's local hashes, already seeded and chunked with this partition's block size. */
    Future<QueryResult> query(long[] localHashes);

    /**
     * Matches a prompt whose local hashes are computed as the walk reaches them, so a prompt's tail nobody holds is
     * not hashed; a partition whose match runs elsewhere computes them all and sends them.
     */
    default Future<QueryResult> query(LocalHashes localHashes) {
        return query(localHashes.toArray());
    }

    /** Matches the rolling sequence hashes of Mooncake's {@code /query_by_hash}. */
    Future<QueryResult> queryBySequenceHashes(long[] sequenceHashes);

    /** Matches a prompt given as its engines' own block hashes (SGLang's router, over gRPC). */
    Future<QueryResult> queryByEngineHashes(long[] engineHashes);

    /** The match of the three above that {@code kind} names. */
    default Future<QueryResult> query(PromptHashes kind, long[] hashes) {
        return switch (kind) {
            case LOCAL -> query(hashes);
            case SEQUENCE -> queryBySequenceHashes(hashes);
            case ENGINE -> queryByEngineHashes(hashes);
        };
    }

    /** Matches a prompt's local hashes tier by tier (Dynamo's {@code /query_tiered_by_hash}). */
    Future<TieredQueryResult> queryTiered(long[] localHashes);

    /**
     * The engine hashes one rank holds along a prompt's local hashes from its first block, device then host pinned, at
     * most {@code maxBlocks} (what a KV fetch hint names); empty when it holds none here.
     */
    Future<long[]> engineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks);

    /** Standardized KV events (POST /events), applied in order under their streams' event_id rules. */
    Future<StandardEventsApplied> applyStandard(List<StandardEvent> events);

    /**
     * The partition's exact snapshot, taken in one step with every stream's watermark: what {@code /dump} serves, as
     * JSON rendered from it or as the binary form nodes recover from.
     */
    Future<PartitionSnapshot> snapshot(PartitionSnapshot.Order order);

    /**
     * The exact snapshot of {@link #snapshot} limited to some instances: their blocks and their streams' watermarks,
     * what a node taking over their shard installs before it listens.
     */
    Future<byte[]> snapshotOf(long[] workerIds);

    /** Size figures for /metrics. */
    Future<PartitionStats> stats();
}
