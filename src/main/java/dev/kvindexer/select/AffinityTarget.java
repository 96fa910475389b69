package dev.kvindexer.select;

/**
 * Where a session is bound, or where a request's {@code affinity_target} steers it: a worker, and one of its ranks
 * when {@code dpRank} is not null (a worker-only target lets the worker's ranks compete).
 */
public record AffinityTarget(long workerId, Integer dpRank) {
    /** Whether a choice of this worker and rank lands where the target says. */
    public boolean covers(long worker, int rank) {
        return workerId == worker && (dpRank == null || dpRank == rank);
    }

    @Override
    public String toString() {
        return Long.toUnsignedString(workerId) + (dpRank == null ? "" : " rank " + dpRank);
    }
}
