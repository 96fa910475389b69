package dev.kvindexer.select;

/**
 * Where a booked rank could fetch more of its prompt's cache from, for the booking's KV hint
 * (docs/api/selection.md#kv-hints): another rank of a worker with the same hint worker type that holds a strictly longer
 * prefix of the prompt (device plus host-pinned extension, the reach both sides count) and serves fetches on a
 * control endpoint for that rank. A worker whose blocks a state agent reports is never a source.
 */
public final class HintSources {
    /** The source chosen: its rank, the endpoint that rank serves fetches on, and the prompt blocks it holds. */
    public record Source(long workerId, int dpRank, String controlEndpoint, int blocks) {}

    private HintSources() {}

    /**
     * For the rank {@code chosen} booked, with the overlaps it was chosen from: the longest qualifying prefix, a tie
     * going to the lowest (worker id, rank) so the answer does not depend on the order of the overlaps; null when the
     * chosen worker takes no hints or no rank qualifies. Only the partition's schedulable workers are sources.
     */
    public static Source best(Roster roster, Choice chosen, RankOverlaps overlaps) {
        String type = chosen.worker().hintWorkerType();
        if (type == null) {
            return null;
        }
        long targetWorker = chosen.worker().workerId();
        RankOverlaps.Hit own = overlaps.of(targetWorker, chosen.dpRank());
        int toBeat = own.dev() + own.host();
        Source best = null;
        for (RankOverlaps.Hit h : overlaps.hits()) {
            int blocks = h.dev() + h.host();
            if (blocks <= toBeat || (h.workerId() == targetWorker && h.dpRank() == chosen.dpRank())) {
                continue;
            }
            WorkerEntry w = roster.schedulable(h.workerId(), chosen.partition());
            if (w == null || w.stateAgentSource() || !type.equals(w.hintWorkerType())) {
                continue;
            }
            String endpoint = w.hintControlEndpoint(h.dpRank());
            if (endpoint != null && (best == null || before(blocks, h, best))) {
                best = new Source(h.workerId(), h.dpRank(), endpoint, blocks);
            }
        }
        return best;
    }

    private static boolean before(int blocks, RankOverlaps.Hit h, Source other) {
        if (blocks != other.blocks()) {
            return blocks > other.blocks();
        }
        int byWorker = Long.compareUnsigned(h.workerId(), other.workerId());
        return byWorker != 0 ? byWorker < 0 : h.dpRank() < other.dpRank();
    }
}
