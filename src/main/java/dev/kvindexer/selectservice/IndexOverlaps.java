package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.TieredQueryResult;
import dev.kvindexer.select.Prompt;
import dev.kvindexer.select.RankOverlaps;
import dev.kvindexer.web.ContextHop;
import dev.kvindexer.web.HttpError;
import io.vertx.core.Context;
import io.vertx.core.Future;

/**
 * What each rank caches of a prompt, per tier, as the embedded index matches it, and the engine hashes naming one rank's
 * blocks; answered on the service's context.
 */
final class IndexOverlaps {
    private final IndexAccess index;
    private final Context home;
    private final PredictedIndex predicted;

    /** {@code predicted}: the predicted entries merged into every answer, or null when there are none. */
    IndexOverlaps(IndexAccess index, Context home, PredictedIndex predicted) {
        this.index = index;
        this.home = home;
        this.predicted = predicted;
    }

    /**
     * The index's tiered match of the prompt per rank, with predicted entries merged when they are on; an index
     * failure is a 500 with its message.
     */
    Future<RankOverlaps> of(PartitionKey p, Prompt prompt) {
        if (prompt.blockHashes().length == 0) {
            return Future.succeededFuture(RankOverlaps.NONE);
        }
        return ContextHop.on(home, index.queryTiered(p, prompt.blockHashes())).transform(ar -> {
            if (ar.failed()) {
                return Future.failedFuture(new HttpError(500, ar.cause().getMessage()));
            }
            RankOverlaps ranks = ranks(ar.result());
            return Future.succeededFuture(predicted == null ? ranks : predicted.merge(p, prompt, ranks));
        });
    }

    /**
     * The engine hashes one rank holds of the prompt from its first block, device then host pinned, at most
     * {@code blocks}; empty when the index cannot tell.
     */
    Future<long[]> engineHashes(PartitionKey p, long workerId, int dpRank, Prompt prompt, int blocks) {
        return ContextHop.on(home, index.engineHashes(p, workerId, dpRank, prompt.blockHashes(), blocks))
                .otherwise(new long[0]);
    }

    /** Whether answers carry predicted entries. */
    boolean predicting() {
        return predicted != null;
    }

    /** The engines' own overlaps per rank in {@code result} (null: no index), nothing predicted. */
    static RankOverlaps ranks(TieredQueryResult result) {
        RankOverlaps out = new RankOverlaps();
        if (result == null) {
            return out;
        }
        TieredMatch m = result.match();
        add(out, m.device(), 0);
        for (TieredMatch.Tier t : m.lowerTiers()) {
            add(out, t.hits(), t.tier() == StorageTier.HOST_PINNED ? 1 : 2);
        }
        return out;
    }

    private static void add(RankOverlaps out, TieredMatch.Owners owners, int tier) {
        for (int i = 0; i < owners.size(); i++) {
            if (owners.blocks()[i] > 0) {
                out.add(owners.workers()[i], owners.ranks()[i], tier, owners.blocks()[i]);
            }
        }
    }
}
