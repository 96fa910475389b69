package dev.kvindexer.select;

import java.util.List;
import java.util.Map;

/** What a selection request asks beyond its prompt (docs/api/selection.md#post-select). Null members are absent. */
public record SelectionOptions(
        String selectionId,
        ConfigOverride override,
        Long expectedOutputTokens,
        List<Long> allowedWorkers,
        Long pinnedWorker,
        Integer pinnedRank,
        List<String> requiredTaints,
        Map<String, Double> preferredTaints,
        String loraName) {
    public static SelectionOptions plain(String selectionId) {
        return new SelectionOptions(
                selectionId, ConfigOverride.NONE, null, null, null, null, List.of(), Map.of(), null);
    }

    /** Whether the request lets this worker serve it: in the allowed set, if any, and bearing every required taint. */
    boolean admits(WorkerEntry w) {
        return (allowedWorkers == null || allowedWorkers.contains(w.workerId()))
                && w.taints().containsAll(requiredTaints);
    }
}
