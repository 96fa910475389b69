package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;

/**
 * A selection's answer: the rank chosen, what it already caches of the prompt, and what booking it would cost.
 *
 * @param activePrefillTokens the chosen rank's {@code active_prefill_tokens} when it was chosen, this prompt excluded
 */
public record Choice(
        String selectionId,
        PartitionKey partition,
        WorkerEntry worker,
        int dpRank,
        int blockSize,
        Overlap overlap,
        long effectivePrefill,
        long potentialDecodeBlocks,
        long activePrefillTokens,
        Prompt prompt,
        boolean trackPrefill) {
    /** The chosen worker's overlap over its whole rank range, in tokens (docs/api/selection.md#post-select {@code overlap}). */
    public record Overlap(long longestMatched, long gpu, long[] dpRanks, long[] dpTokens, long cpu, long disk) {}

    Choice withId(String id) {
        return new Choice(
                id,
                partition,
                worker,
                dpRank,
                blockSize,
                overlap,
                effectivePrefill,
                potentialDecodeBlocks,
                activePrefillTokens,
                prompt,
                trackPrefill);
    }
}
