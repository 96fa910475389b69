package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ExpectedWorker;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.grpc.v1.TierHashes;
import dev.kvindexer.grpc.v1.TierType;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.StatusException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A bridge cannot make the node hold more than its limits: a batch, snapshot or configuration that could pass the
 * most workers or placements is refused with RESOURCE_EXHAUSTED (the bridge retries such) and changes nothing, and
 * what is revoked makes room again.
 */
class ExternalKvLimitsTest {
    private final ExternalKvService service = new ExternalKvService(4, 2, 5, RegisteredEngines.NONE);

    private static void refused(Runnable call) {
        StatusException e = assertThrows(StatusException.class, call::run);
        assertEquals(GrpcStatus.RESOURCE_EXHAUSTED, e.status(), e.message());
    }

    @Test
    void aBatchThatCouldPassThePlacementLimitChangesNothing() {
        service.apply(batch("w1", "a1", 1, report(TierType.TIER_HBM, 1, 2, 3, 4)));
        refused(() -> service.apply(batch("w1", "a1", 2, report(TierType.TIER_HBM, 5, 6))));
        assertEquals(4, service.blocks());
        service.apply(batch("w1", "a1", 3, report(TierType.TIER_DRAM, 5)));
        assertEquals(5, service.blocks());
        // A batch is judged by what it reports, whatever it revokes first: the check changes nothing to make it.
        refused(() -> service.apply(batch(
                "w1",
                "a1",
                4,
                GrpcFixture.action(ExternalKvActionType.ACTION_REVOKE, TierType.TIER_HBM, 1, 2),
                report(TierType.TIER_HBM, 7))));
        assertEquals(5, service.blocks());
        // Revoked in a batch of their own, the blocks make room again.
        service.apply(
                batch("w1", "a1", 5, GrpcFixture.action(ExternalKvActionType.ACTION_REVOKE, TierType.TIER_HBM, 1, 2)));
        service.apply(batch("w1", "a1", 6, report(TierType.TIER_HBM, 7)));
        assertEquals(4, service.blocks());
    }

    @Test
    void moreWorkersThanTheLimitAreRefused() {
        service.apply(batch("w1", "a1", 1, report(TierType.TIER_HBM, 1)));
        service.apply(batch("w2", "a2", 1, report(TierType.TIER_HBM, 1)));
        refused(() -> service.apply(batch("w3", "a3", 1)));
        assertEquals(2, service.workers());
        refused(() -> service.configure(ConfigureExpectedWorkersRequest.newBuilder()
                .addAllWorkers(List.of(worker("x1"), worker("x2"), worker("x3")))
                .build()));
        assertEquals(2, service.workers(), "a refused configuration removes nobody");
        service.apply(batch("w1", "a1", 2, report(TierType.TIER_HBM, 2)));
    }

    @Test
    void aSnapshotIsJudgedByWhatItReplaces() {
        service.configure(ConfigureExpectedWorkersRequest.newBuilder()
                .addWorkers(worker("w1"))
                .build());
        service.apply(batch("w1", "a1", 1, report(TierType.TIER_HBM, 1, 2, 3, 4, 5)));
        // Five held, five in the snapshot: it replaces them, so it fits.
        service.replace(snapshot(10, 11, 12, 13, 14));
        assertEquals(5, service.blocks());
        refused(() -> service.replace(snapshot(20, 21, 22, 23, 24, 25)));
        assertEquals(5, service.blocks(), "the refused snapshot left the old one in place");
    }

    private static ExpectedWorker worker(String id) {
        return ExpectedWorker.newBuilder()
                .setWorkerId(id)
                .setWorkerAddress("a-" + id)
                .build();
    }

    private static ReplaceExternalKvSnapshotRequest snapshot(long... hashes) {
        TierHashes.Builder t = TierHashes.newBuilder().setTier(TierType.TIER_HBM);
        for (long h : hashes) {
            t.addHashes(h);
        }
        return ReplaceExternalKvSnapshotRequest.newBuilder()
                .setWorkerId("w1")
                .setWorkerAddress("a1")
                .setWorkerEpoch("e1")
                .setAppliedSeq(9)
                .addHashesByTier(t)
                .build();
    }
}
