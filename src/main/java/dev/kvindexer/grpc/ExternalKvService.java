package dev.kvindexer.grpc;

import com.google.protobuf.Message;
import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchResponse;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersResponse;
import dev.kvindexer.grpc.v1.GetExternalKvHitCountsRequest;
import dev.kvindexer.grpc.v1.GetExternalKvHitCountsResponse;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.MatchExternalKvRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvResponse;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotResponse;
import dev.kvindexer.metrics.GrpcMetrics;
import io.vertx.core.Future;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.StatusException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * SGLang's KVIndexer operations over one {@link ExternalKvIndex}, callable from any thread: each request is checked,
 * then applied or answered atomically (changes under the write half of a fair lock, queries under the read half, so
 * queries on every event loop run at once and never see half a batch). Prefix queries past the in-flight limit are
 * refused at once with RESOURCE_EXHAUSTED, never queued, as the router expects of an overloaded indexer.
 */
public final class ExternalKvService implements GrpcMetrics.Figures {
    private final ExternalKvIndex index;
    private final RegisteredEngines registered;
    private final ExternalKvReplica replica;
    final ReentrantReadWriteLock lock = new ReentrantReadWriteLock(true);
    private final int prefixMaxInflight;
    private final AtomicInteger prefixInflight = new AtomicInteger();

    /** Over the bridge's reports alone, with the default limits. */
    public ExternalKvService(int prefixMaxInflight) {
        this(prefixMaxInflight, RegisteredEngines.NONE);
    }

    /** Over the bridge's reports and the engines the node reads itself, with the default limits. */
    public ExternalKvService(int prefixMaxInflight, RegisteredEngines registered) {
        this(prefixMaxInflight, GrpcConfig.DEFAULT_MAX_WORKERS, GrpcConfig.DEFAULT_MAX_PLACEMENTS, registered);
    }

    /**
     * @param maxWorkers    the most workers the bridge may configure or report at once
     * @param maxPlacements the most (block, worker, tier) placements held at once
     */
    public ExternalKvService(int prefixMaxInflight, int maxWorkers, long maxPlacements, RegisteredEngines registered) {
        this(prefixMaxInflight, maxWorkers, maxPlacements, registered, ExternalKvPeers.NONE);
    }

    /** @param peers the other members of the cluster, which hold the bridge's state too */
    public ExternalKvService(
            int prefixMaxInflight,
            int maxWorkers,
            long maxPlacements,
            RegisteredEngines registered,
            ExternalKvPeers peers) {
        this.index = new ExternalKvIndex(maxWorkers, maxPlacements);
        this.registered = registered;
        this.replica = new ExternalKvReplica(this, peers);
        if (prefixMaxInflight <= 0) {
            throw new IllegalArgumentException(
                    "the prefix query in-flight limit must be positive: " + prefixMaxInflight);
        }
        this.prefixMaxInflight = prefixMaxInflight;
    }

    public ConfigureExpectedWorkersResponse configure(ConfigureExpectedWorkersRequest r) {
        RequestChecks.configure(r);
        int[] counts = write(() -> index.configure(r.getWorkersList()));
        return ConfigureExpectedWorkersResponse.newBuilder()
                .setTotalWorkers(counts[0])
                .setReadyWorkers(counts[1])
                .build();
    }

    public ReplaceExternalKvSnapshotResponse replace(ReplaceExternalKvSnapshotRequest r) {
        RequestChecks.replace(r);
        long seq = write(() -> index.replace(r));
        return ReplaceExternalKvSnapshotResponse.newBuilder().setAppliedSeq(seq).build();
    }

    public ApplyExternalKvBatchResponse apply(ApplyExternalKvBatchRequest r) {
        RequestChecks.apply(r);
        long[] outcome = write(() -> index.apply(r));
        return ApplyExternalKvBatchResponse.newBuilder()
                .setAppliedSeq(outcome[0])
                .setDuplicate(outcome[1] != 0)
                .build();
    }

    /**
     * Copies another member's bridge state, when a member serves one, and keeps taking the others' changes: before the
     * port serves.
     */
    public Future<Void> join() {
        return replica.join();
    }

    ExternalKvReplica replica() {
        return replica;
    }

    /** Stops taking the other members' changes and questions. */
    public Future<Void> stop() {
        return replica.stop();
    }

    /** {@link #configure}, then the change on every other member of the cluster before the answer. */
    public Future<ConfigureExpectedWorkersResponse> configureEverywhere(ConfigureExpectedWorkersRequest r) {
        ConfigureExpectedWorkersResponse answer = configure(r);
        return replica.share(ExternalKvReplica.CONFIGURE, r).map(answer);
    }

    /** {@link #replace}, then the change on every other member of the cluster before the answer. */
    public Future<ReplaceExternalKvSnapshotResponse> replaceEverywhere(ReplaceExternalKvSnapshotRequest r) {
        ReplaceExternalKvSnapshotResponse answer = replace(r);
        return replica.share(ExternalKvReplica.REPLACE, r).map(answer);
    }

    /** {@link #apply}, then the change on every other member of the cluster before the answer. */
    public Future<ApplyExternalKvBatchResponse> applyEverywhere(ApplyExternalKvBatchRequest r) {
        ApplyExternalKvBatchResponse answer = apply(r);
        return replica.share(ExternalKvReplica.APPLY, r).map(answer);
    }

    /**
     * The bridge's state as the requests that make it again (hit counters aside), handed to {@code out} one at a time:
     * each worker's part read under the read lock on its own, so bridge changes and queries go on between workers.
     * {@code out} may throw to stop.
     */
    void state(Consumer<Message> out) {
        List<String> ids = read(() -> {
            out.accept(index.configuration());
            return index.workerIds();
        });
        for (String id : ids) {
            read(() -> {
                index.stateOf(id, out);
                return null;
            });
        }
    }

    public MatchExternalKvResponse match(MatchExternalKvRequest r) {
        RequestChecks.hashes(r.getHashesList());
        long[] hashes = hashes(r.getHashesList());
        // Counting changes the hit counters: a write.
        Lock held = r.getCountAsHit() ? lock.writeLock() : lock.readLock();
        held.lock();
        try {
            return MatchExternalKvResponse.newBuilder()
                    .addAllMatches(index.match(hashes, r.getCountAsHit()))
                    .build();
        } finally {
            held.unlock();
        }
    }

    public GetExternalKvHitCountsResponse hitCounts(GetExternalKvHitCountsRequest r) {
        RequestChecks.hashes(r.getHashesList());
        long[] hashes = hashes(r.getHashesList());
        lock.readLock().lock();
        try {
            return GetExternalKvHitCountsResponse.newBuilder()
                    .addAllEntries(index.hitCounts(hashes))
                    .build();
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The bridge's reports and the registered engines, as one answer: longest first, a worker named by both counted
     * once, at its longer match. The permit is held until both have answered.
     */
    public Future<MatchExternalKvPrefixResponse> matchPrefix(MatchExternalKvPrefixRequest r) {
        RequestChecks.prefixHashes(r.getHashesCount());
        if (prefixInflight.incrementAndGet() > prefixMaxInflight) {
            prefixInflight.decrementAndGet();
            throw new StatusException(GrpcStatus.RESOURCE_EXHAUSTED, "too many in-flight prefix queries");
        }
        Future<MatchExternalKvPrefixResponse> answer;
        try {
            long[] hashes = hashes(r.getHashesList());
            int limit = ExternalKvIndex.considered(hashes.length, r.getMaxBlocks());
            MatchExternalKvPrefixResponse reported;
            lock.readLock().lock();
            try {
                reported = index.matchPrefix(hashes, r.getMaxBlocks());
            } finally {
                lock.readLock().unlock();
            }
            answer = registered
                    .prefixes(limit == hashes.length ? hashes : Arrays.copyOf(hashes, limit))
                    .map(engines -> PrefixAnswers.merge(reported, engines, limit));
        } catch (RuntimeException e) {
            prefixInflight.decrementAndGet();
            throw e;
        }
        return answer.andThen(done -> prefixInflight.decrementAndGet());
    }

    /** Prefix queries being answered now. */
    @Override
    public int prefixInflight() {
        return prefixInflight.get();
    }

    @Override
    public int prefixMaxInflight() {
        return prefixMaxInflight;
    }

    @Override
    public int workers() {
        return read(index::workerCount);
    }

    @Override
    public int readyWorkers() {
        return read(index::readyWorkers);
    }

    @Override
    public int blocks() {
        return read(index::blockCount);
    }

    @Override
    public long peerChanges(String outcome) {
        return switch (outcome) {
            case GrpcMetrics.SENT_MISSED -> replica.missed.sum();
            case GrpcMetrics.RECEIVED_APPLIED -> replica.applied.sum();
            default -> replica.refused.sum();
        };
    }

    @Override
    public boolean stateCopied() {
        return replica.copied;
    }

    private <T> T write(java.util.function.Supplier<T> change) {
        lock.writeLock().lock();
        try {
            return change.get();
        } catch (ExternalKvIndex.Precondition e) {
            throw new StatusException(GrpcStatus.FAILED_PRECONDITION, e.getMessage());
        } catch (ExternalKvIndex.Full e) {
            throw new StatusException(GrpcStatus.RESOURCE_EXHAUSTED, e.getMessage());
        } finally {
            lock.writeLock().unlock();
        }
    }

    private <T> T read(java.util.function.Supplier<T> figure) {
        lock.readLock().lock();
        try {
            return figure.get();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The packed hashes unboxed: protobuf keeps them in a primitive list, read here once. */
    private static long[] hashes(java.util.List<Long> list) {
        long[] out = new long[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ExternalKvIndex.longAt(list, i);
        }
        return out;
    }
}
