package dev.kvindexer.select;

import java.util.List;
import java.util.Map;

/**
 * What a selection request asks beyond its prompt (docs/api/selection.md#post-select). Null members are absent.
 *
 * @param session        the request's session, read only when session affinity is on
 * @param affinityTarget where the request steers itself, with or without session affinity (as in Dynamo)
 */
public record SelectionOptions(
        String selectionId,
        ConfigOverride override,
        Long expectedOutputTokens,
        List<Long> allowedWorkers,
        Long pinnedWorker,
        Integer pinnedRank,
        List<String> requiredTaints,
        Map<String, Double> preferredTaints,
        String loraName,
        SessionContext session,
        AffinityTarget affinityTarget) {
    public static SelectionOptions plain(String selectionId) {
        return new SelectionOptions(
                selectionId, ConfigOverride.NONE, null, null, null, null, List.of(), Map.of(), null, null, null);
    }

    /** The session whose binding steers this request: none when it names its own target or pins a worker. */
    String steeringSession() {
        return session == null || affinityTarget != null || pinnedWorker != null ? null : session.sessionId();
    }

    /** Whether the request lets this worker serve it: in the allowed set, if any, and bearing every required taint. */
    boolean admits(WorkerEntry w) {
        return (allowedWorkers == null || allowedWorkers.contains(w.workerId()))
                && w.taints().containsAll(requiredTaints);
    }
}
