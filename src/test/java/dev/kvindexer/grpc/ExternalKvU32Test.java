package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.batch;
import static dev.kvindexer.grpc.GrpcFixture.get;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvRequest;
import dev.kvindexer.grpc.v1.TierType;
import dev.kvindexer.grpc.v1.WorkerCacheSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The contract's uint32 fields are read unsigned: a {@code max_blocks} or a block's token count past 2^31 (a negative
 * Java int) is a large number, not a negative one.
 */
class ExternalKvU32Test {
    private final ExternalKvService service = new ExternalKvService(4);

    @Test
    void maxBlocksPastTwoToTheThirtyOneIsNoCeilingBelowThePrompt() throws Exception {
        service.apply(batch("u32-w", "http://10.0.0.1:30000", 1, GrpcFixture.report(TierType.TIER_HBM, 1, 2, 3)));
        for (int maxBlocks : new int[] {-1, Integer.MIN_VALUE}) {
            var r = get(service.matchPrefix(MatchExternalKvPrefixRequest.newBuilder()
                    .addAllHashes(List.of(1L, 2L, 3L))
                    .setMaxBlocks(maxBlocks)
                    .build()));
            assertEquals(3, r.getBestPrefixBlocks(), "max_blocks " + Integer.toUnsignedString(maxBlocks));
            assertEquals(3, r.getBlocksRead());
        }
    }

    @Test
    void tokenCountsPastTwoToTheThirtyOneCountTowardTheSlidingWindow() throws Exception {
        int half = Integer.MIN_VALUE; // 2^31 tokens
        WorkerCacheSpec swa = WorkerCacheSpec.newBuilder()
                .setVersion(1)
                .setComponents(ExternalKvIndex.FULL | ExternalKvIndex.SWA)
                .setSwaWindowTokens((int) 0xC000_0000L) // 3 x 2^30 tokens
                .setFullTierMask(ExternalKvIndex.SERVABLE_TIERS)
                .setSwaTierMask(ExternalKvIndex.SERVABLE_TIERS)
                .build();
        ApplyExternalKvBatchRequest report = ApplyExternalKvBatchRequest.newBuilder()
                .setWorkerId("u32-swa")
                .setWorkerAddress("http://10.0.0.2:30000")
                .setCacheSpec(swa)
                .addActions(ExternalKvAction.newBuilder()
                        .setType(ExternalKvActionType.ACTION_REPORT)
                        .setTier(TierType.TIER_HBM)
                        .addAllHashes(List.of(11L, 12L, 13L))
                        // The first block lacks SWA, so the window must be covered by blocks 2 and 3 alone.
                        .addAllComponentMasks(List.of(ExternalKvIndex.FULL, 3, 3))
                        .addAllBlockSizes(List.of(16, half, half)))
                .build();
        service.apply(report);
        assertEquals(
                List.of(16, half, half),
                service.match(MatchExternalKvRequest.newBuilder()
                                .addAllHashes(List.of(11L, 12L, 13L))
                                .build())
                        .getMatches(0)
                        .getHashesByTier(0)
                        .getBlockSizesList(),
                "the counts are kept as sent");
        // 2^31 + 2^31 = 2^32 tokens cover the 3 x 2^30 window at block 3, and 2^31 alone does not at block 2.
        assertEquals(
                3,
                get(service.matchPrefix(MatchExternalKvPrefixRequest.newBuilder()
                                .addAllHashes(List.of(11L, 12L, 13L))
                                .build()))
                        .getBestPrefixBlocks());
    }
}
