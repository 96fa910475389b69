package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.PredictedBlocks;
import dev.kvindexer.select.Prompt;
import dev.kvindexer.select.RankOverlaps;
import dev.kvindexer.web.ContextHop;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.function.LongSupplier;

/**
 * Predicted entries on the service's context (docs/api/selection.md#predicted-entries): each booking's blocks are
 * recorded for its rank, merged into later selections' device overlaps, and ended on a timer. Each ended prediction
 * is checked against the engine's events: its blocks that the rank's engine by then reports holding, in any tier, are
 * confirmed; the rest never were. That ratio is what the feature is worth on a workload.
 */
final class PredictedIndex implements BookedPrompts {
    /** What /metrics shows: blocks held, blocks of ended predictions by outcome, predictions ended early when full. */
    record Counts(long entries, long confirmedBlocks, long unconfirmedBlocks, long evicted) {
        static final Counts NONE = new Counts(0, 0, 0, 0);
    }

    private final PredictedBlocks blocks;
    private final IndexAccess index;
    private final Context home;
    private final Vertx vertx;
    private final long timer;
    private long confirmed;
    private long unconfirmed;

    /** {@code maxEntries}: predicted blocks held together before the oldest predictions end early. */
    PredictedIndex(
            Vertx vertx, Context home, IndexAccess index, LongSupplier clockMillis, long ttlMillis, long maxEntries) {
        this.vertx = vertx;
        this.home = home;
        this.index = index;
        this.blocks = new PredictedBlocks(clockMillis, ttlMillis, maxEntries);
        // A prediction counts until the timer ends it: at most a tenth of the TTL, and 100 ms, late.
        this.timer = vertx.setPeriodic(Math.max(10, Math.min(ttlMillis / 10, 100)), id -> endExpired());
    }

    @Override
    public void booked(PartitionKey p, long workerId, int dpRank, Prompt prompt) {
        blocks.record(p, workerId, dpRank, prompt.blockHashes());
    }

    @Override
    public void forget(PartitionKey p, long workerId, int dpRank) {
        blocks.forget(p, workerId, dpRank);
    }

    /** Raises each rank's device overlap of the prompt to its predicted prefix where that is longer. */
    RankOverlaps merge(PartitionKey p, Prompt prompt, RankOverlaps overlaps) {
        for (PredictedBlocks.Depth d : blocks.depths(p, prompt.blockHashes())) {
            overlaps.predict(d.workerId(), d.dpRank(), d.blocks());
        }
        return overlaps;
    }

    Counts counts() {
        return new Counts(blocks.entries(), confirmed, unconfirmed, blocks.evictedEarly());
    }

    void stop() {
        vertx.cancelTimer(timer);
    }

    private void endExpired() {
        for (PredictedBlocks.Prediction ended : blocks.expire()) {
            ContextHop.on(home, index.queryTiered(ended.partition(), ended.blockHashes()))
                    .onSuccess(result -> {
                        RankOverlaps.Hit held = IndexOverlaps.ranks(result).of(ended.workerId(), ended.dpRank());
                        int predicted = ended.blockHashes().length;
                        int reported = Math.min(predicted, held.dev() + held.host() + held.disk());
                        confirmed += reported;
                        unconfirmed += predicted - reported;
                    });
        }
    }
}
