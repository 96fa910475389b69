package dev.kvindexer.selectservice;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.Prompt;

/**
 * Where a booked selection's prompt is recorded (docs/api/selection.md#startup-and-kv-indexing-modes): into the index
 * itself when workers publish no KV events ({@link ApproximateIndex}), as predicted entries beside it when
 * {@code DYN_ROUTER_PREDICTED_TTL_SECS} is set ({@link PredictedIndex}), nowhere otherwise. A prompt booked by its
 * sequence hashes alone has no blocks to record. Runs on the service's context.
 */
interface BookedPrompts {
    /** Records nothing: workers publish KV events and nothing is predicted. */
    BookedPrompts NONE = (p, workerId, dpRank, prompt) -> {};

    void booked(PartitionKey p, long workerId, int dpRank, Prompt prompt);

    /**
     * A worker's rank ({@code dpRank} -1: every rank) left the partition; what was recorded for it goes. Blocks recorded
     * into the index leave with the rank's registration, so only a record kept apart has anything to do.
     */
    default void forget(PartitionKey p, long workerId, int dpRank) {}
}
