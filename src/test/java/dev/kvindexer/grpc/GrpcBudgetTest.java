package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.get;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.TierType;
import dev.kvindexer.net.NetworkBudget;
import dev.kvindexer.support.Await;
import org.junit.jupiter.api.Test;

/**
 * A call's body is held under the node's network budget while Vert.x's gRPC server gathers it: one the budget cannot
 * hold is cancelled before it is buffered, and every byte reserved comes back, whichever way the call ended.
 */
class GrpcBudgetTest {
    @Test
    void aCallLargerThanTheBudgetIsCancelledAndEveryReservationComesBack() throws Exception {
        NetworkBudget budget = new NetworkBudget(2L * 1024 * 1024);
        try (GrpcFixture g = new GrpcFixture(32, SecurityConfig.NONE, budget)) {
            get(g.client.applyExternalKvBatch(
                    batch("budget-w", "http://10.0.0.1:30000", 1, report(TierType.TIER_HBM, 1))));
            MatchExternalKvPrefixRequest.Builder big = MatchExternalKvPrefixRequest.newBuilder();
            for (long h = 1; h <= 400_000; h++) { // 3.2 MB: more than the whole budget
                big.addHashes(h);
            }
            // The stream is reset: the client sees the call end without an answer.
            assertThrows(
                    io.vertx.core.http.HttpClosedException.class,
                    () -> get(g.client.matchExternalKvPrefix(big.build())),
                    "a call the budget cannot hold is not served");
            Await.until("the refused call's reservation came back", Await.PATIENCE, () -> budget.held() == 0);
            assertEquals(1, budget.refusals(NetworkBudget.GRPC));

            // Calls that fit are served, and leave nothing held behind.
            for (int i = 0; i < 20; i++) {
                assertEquals(
                        1,
                        get(g.client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                                        .addHashes(1)
                                        .addHashes(2)
                                        .build()))
                                .getBestPrefixBlocks());
            }
            Await.until("served calls hold nothing", Await.PATIENCE, () -> budget.held() == 0);
        }
    }
}
