package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.WorkerRank;
import dev.kvindexer.load.SlotTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/** The inspection routes' figures (docs/api/selection.md#inspection): each rank's load as it is, as a prompt would make it, its scores. */
public final class LoadViews {
    /** One rank's load row for /loads and /potential_loads. */
    public record LoadRow(long workerId, int dpRank, long prefillTokens, long decodeBlocks, int requests) {}

    /** One row of /overlap_scores, in blocks. */
    /** One rank's overlap score; {@code predicted} is its predicted prefix, already merged into {@code dev}. */
    public record ScoreRow(
            long workerId, int dpRank, int dev, int host, int disk, int predicted, double creditBlocks) {}

    private final SelectionConfig config;
    private final Roster roster;
    private final Chooser chooser;

    LoadViews(SelectionConfig config, Roster roster, Chooser chooser) {
        this.config = config;
        this.roster = roster;
        this.chooser = chooser;
    }

    /** Every rank of a partition's schedulable workers with its load, sorted by worker id and rank. */
    public List<LoadRow> loads(PartitionKey p) {
        List<LoadRow> out = new ArrayList<>();
        for (WorkerEntry w : roster.catalog().schedulable(p)) {
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                SlotTracker.ActiveLoad l = roster.load(p, w.workerId(), rank);
                out.add(
                        l == null
                                ? new LoadRow(w.workerId(), (int) rank, 0, 0, 0)
                                : new LoadRow(
                                        w.workerId(), (int) rank, l.prefillTokens(), l.decodeBlocks(), l.requests()));
            }
        }
        return out;
    }

    /** {@code POST /potential_loads} (docs/api/selection.md#post-potential_loads): each rank's load if this prompt were booked there. */
    public List<LoadRow> potentialLoads(PartitionKey p, Prompt prompt, RankOverlaps overlaps, ConfigOverride override) {
        PartitionInfo info = roster.requireReady(p);
        CostModel model = CostModel.of(prompt.isl(), info.blockSize(), config, override);
        boolean track = override.trackPrefill(config);
        List<LoadRow> out = new ArrayList<>();
        for (RankInputs r : chooser.candidates(p, prompt, overlaps, SelectionOptions.plain(null))) {
            long delta = track ? model.effectivePrefill(r) : 0;
            out.add(new LoadRow(
                    r.workerId(), r.dpRank(), r.prefill() + delta, r.decode() + r.newBlocks(), r.requests()));
        }
        return out;
    }

    /** {@code POST /overlap_scores} (docs/api/selection.md#post-overlap_scores): every schedulable rank and every rank the index matched. */
    public List<ScoreRow> overlapScores(PartitionKey p, Prompt prompt, RankOverlaps overlaps, ConfigOverride override) {
        PartitionInfo info = roster.requireReady(p);
        CostModel model = CostModel.of(prompt.isl(), info.blockSize(), config, override);
        TreeMap<WorkerRank, RankOverlaps.Hit> rows = new TreeMap<>();
        for (WorkerEntry w : roster.catalog().schedulable(p)) {
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                rows.put(new WorkerRank(w.workerId(), (int) rank), overlaps.of(w.workerId(), (int) rank));
            }
        }
        for (RankOverlaps.Hit h : overlaps.hits()) {
            rows.put(new WorkerRank(h.workerId(), h.dpRank()), h);
        }
        List<ScoreRow> out = new ArrayList<>();
        for (RankOverlaps.Hit h : rows.values()) {
            RankInputs r = new RankInputs(h.workerId(), h.dpRank(), h.dev(), h.host(), h.disk(), 0, 0, 0, 0, 1.0);
            out.add(new ScoreRow(
                    h.workerId(), h.dpRank(), h.dev(), h.host(), h.disk(), h.predicted(), model.creditBlocks(r)));
        }
        return out;
    }
}
