package dev.kvindexer.grpc;

import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ExpectedWorker;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.grpc.v1.TierHashes;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.StatusException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What SGLang's indexer refuses before anything changes, in its order and with its status codes
 * (docs/api/sglang-grpc.md#refusals): a bad shape is INVALID_ARGUMENT, too many actions or hashes RESOURCE_EXHAUSTED.
 */
final class RequestChecks {
    static final int MAX_HASHES_PER_REQUEST = 16_384;
    static final int MAX_ACTIONS_PER_BATCH = 256;

    private RequestChecks() {}

    static void configure(ConfigureExpectedWorkersRequest r) {
        Set<String> ids = new HashSet<>();
        for (ExpectedWorker w : r.getWorkersList()) {
            workerId(w.getWorkerId());
            if (!ids.add(w.getWorkerId())) {
                throw invalid("worker_id must be unique");
            }
        }
    }

    static void replace(ReplaceExternalKvSnapshotRequest r) {
        workerId(r.getWorkerId());
        if (r.getWorkerEpoch().isEmpty()) {
            throw invalid("worker_epoch must not be empty");
        }
        for (TierHashes t : r.getHashesByTierList()) {
            tier(t.getTierValue());
            bounded(t.getHashesCount());
            aligned(t.getHashesCount(), t.getComponentMasksCount(), t.getBlockSizesCount());
        }
    }

    static void apply(ApplyExternalKvBatchRequest r) {
        workerId(r.getWorkerId());
        if (r.getActionsCount() > MAX_ACTIONS_PER_BATCH) {
            throw exhausted(
                    "a batch carries at most " + MAX_ACTIONS_PER_BATCH + " actions, got " + r.getActionsCount());
        }
        long total = 0;
        for (ExternalKvAction a : r.getActionsList()) {
            total += a.getHashesCount();
        }
        if (total > MAX_HASHES_PER_REQUEST) {
            throw exhausted("a batch carries at most " + MAX_HASHES_PER_REQUEST + " hashes, got " + total);
        }
        for (ExternalKvAction a : r.getActionsList()) {
            tier(a.getTierValue());
            switch (a.getTypeValue()) {
                case 1, 2 -> bounded(a.getHashesCount());
                case 3 -> {}
                default -> throw invalid("action type is not supported");
            }
            aligned(a.getHashesCount(), a.getComponentMasksCount(), a.getBlockSizesCount());
        }
    }

    /** MatchExternalKv and GetExternalKvHitCounts: some hashes, not too many. */
    static void hashes(List<Long> hashes) {
        bounded(hashes.size());
    }

    /** MatchExternalKvPrefix: some hashes, as many as the message holds. */
    static void prefixHashes(int count) {
        if (count == 0) {
            throw invalid("hashes must not be empty");
        }
    }

    private static void workerId(String id) {
        if (id.isEmpty()) {
            throw invalid("worker_id must not be empty");
        }
    }

    private static void tier(int tier) {
        if (tier == 0) {
            throw invalid("tier must not be TIER_UNKNOWN");
        }
        if (tier < 1 || tier > 3) {
            throw invalid("tier is not supported");
        }
    }

    private static void bounded(int count) {
        if (count == 0) {
            throw invalid("hashes must not be empty");
        }
        if (count > MAX_HASHES_PER_REQUEST) {
            throw exhausted("at most " + MAX_HASHES_PER_REQUEST + " hashes, got " + count);
        }
    }

    private static void aligned(int hashes, int masks, int sizes) {
        if (masks != 0 && masks != hashes) {
            throw invalid("component_masks must be empty or one per hash");
        }
        if (sizes != 0 && sizes != hashes) {
            throw invalid("block_sizes must be empty or one per hash");
        }
    }

    static StatusException invalid(String message) {
        return new StatusException(GrpcStatus.INVALID_ARGUMENT, message);
    }

    static StatusException exhausted(String message) {
        return new StatusException(GrpcStatus.RESOURCE_EXHAUSTED, message);
    }
}
