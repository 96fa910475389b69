package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.event.Refusal;
import dev.kvindexer.load.SlotTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * Chooses the rank a prompt goes to (docs/api/selection.md#choosing-a-rank): the eligible ranks with their cache hits and load, each scored by
 * the cost model, one drawn by the softmax picker or named by a pin. Books nothing.
 */
public final class Chooser {
    private final SelectionConfig config;
    private final RandomGenerator random;
    private final Roster roster;

    Chooser(SelectionConfig config, RandomGenerator random, Roster roster) {
        this.config = config;
        this.random = random;
        this.roster = roster;
    }

    /** @param steer where a session's binding or the request's own target steers the choice, or null */
    Choice choose(PartitionKey p, Prompt prompt, RankOverlaps overlaps, SelectionOptions o, AffinityTarget steer) {
        PartitionInfo info = roster.requireReady(p);
        List<RankInputs> candidates = candidates(p, prompt, overlaps, o);
        if (steer != null && o.pinnedWorker() == null) {
            candidates = steered(candidates, steer);
        }
        CostModel model = CostModel.of(prompt.isl(), info.blockSize(), config, o.override());
        RankInputs r = candidates.get(o.pinnedWorker() != null ? pinned(candidates, o) : drawn(candidates, model, o));
        WorkerEntry worker = roster.catalog().get(r.workerId());
        int nb = (int) ((prompt.isl() + info.blockSize() - 1) / info.blockSize());
        long potentialDecode = r.decode() + r.newBlocks() + (nb - prompt.completeBlocks());
        return new Choice(
                o.selectionId(),
                p,
                worker,
                r.dpRank(),
                info.blockSize(),
                overlapOf(worker, overlaps, info.blockSize()),
                model.effectivePrefill(r),
                potentialDecode,
                r.prefill(),
                prompt,
                o.override().trackPrefill(config));
    }

    /** The candidate the pin names; refused when the pin is outside the allowed set or names no eligible rank. */
    private static int pinned(List<RankInputs> candidates, SelectionOptions o) {
        if (o.allowedWorkers() != null && !o.allowedWorkers().contains(o.pinnedWorker())) {
            throw Refusal.badRequest(
                    "pinned worker " + Long.toUnsignedString(o.pinnedWorker()) + " is not in allowed worker set");
        }
        int rank = o.pinnedRank() == null ? 0 : o.pinnedRank();
        int chosen = -1;
        for (int i = 0; i < candidates.size(); i++) {
            if (candidates.get(i).workerId() == o.pinnedWorker()
                    && candidates.get(i).dpRank() == rank) {
                chosen = i;
            }
        }
        if (chosen < 0) {
            throw Refusal.unavailable("no endpoints available to route work");
        }
        return chosen;
    }

    /**
     * The candidates on the target, when any is eligible: a target the request's own restrictions exclude, or whose
     * worker is gone, leaves every candidate in (a binding steers, it never makes a request unroutable).
     */
    private static List<RankInputs> steered(List<RankInputs> candidates, AffinityTarget steer) {
        List<RankInputs> on = new ArrayList<>();
        for (RankInputs r : candidates) {
            if (steer.covers(r.workerId(), r.dpRank())) {
                on.add(r);
            }
        }
        return on.isEmpty() ? candidates : on;
    }

    /** A candidate drawn by its cost: logits relative to the least loaded, softened by the temperature. */
    private int drawn(List<RankInputs> candidates, CostModel model, SelectionOptions o) {
        if (candidates.isEmpty()) {
            throw Refusal.unavailable("no endpoints available to route work");
        }
        long minPrefill = Long.MAX_VALUE;
        for (RankInputs r : candidates) {
            minPrefill = Math.min(minPrefill, r.prefill());
        }
        double[] logits = new double[candidates.size()];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = model.logit(candidates.get(i), minPrefill);
        }
        return RankPicker.pick(logits, o.override().temperature(config), random);
    }

    /** Every eligible rank (docs/api/selection.md#candidates), sorted by worker id and rank, with its cache hit and load. */
    List<RankInputs> candidates(PartitionKey p, Prompt prompt, RankOverlaps overlaps, SelectionOptions o) {
        List<RankInputs> out = new ArrayList<>();
        SlotTracker.ActiveLoads loads = roster.loads(p, prompt.sequenceHashes());
        for (WorkerEntry w : roster.catalog().schedulable(p)) {
            if (!o.admits(w)) {
                continue;
            }
            double multiplier = taintMultiplier(w, o.preferredTaints());
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                SlotTracker.ActiveLoad load = loads.of(w.workerId(), rank);
                RankOverlaps.Hit hit = overlaps.of(w.workerId(), (int) rank);
                int newBlocks = prompt.completeBlocks() - (load == null ? 0 : load.activeDepth());
                out.add(
                        load == null
                                ? new RankInputs(
                                        w.workerId(),
                                        (int) rank,
                                        hit.dev(),
                                        hit.host(),
                                        hit.disk(),
                                        0,
                                        0,
                                        0,
                                        newBlocks,
                                        multiplier)
                                : new RankInputs(
                                        w.workerId(),
                                        (int) rank,
                                        hit.dev(),
                                        hit.host(),
                                        hit.disk(),
                                        load.prefillTokens(),
                                        load.decodeBlocks(),
                                        load.requests(),
                                        newBlocks,
                                        multiplier));
            }
        }
        return out;
    }

    private static double taintMultiplier(WorkerEntry w, Map<String, Double> preferred) {
        if (preferred.isEmpty()) {
            return 1.0;
        }
        double sum = 0;
        for (Map.Entry<String, Double> t : preferred.entrySet()) {
            if (w.taints().contains(t.getKey())) {
                sum += t.getValue();
            }
        }
        return CostModel.taintMultiplier(sum);
    }

    private static Choice.Overlap overlapOf(WorkerEntry w, RankOverlaps overlaps, int blockSize) {
        int n = (int) w.rankCount();
        long[] ranks = new long[n];
        long[] tokens = new long[n];
        long gpu = 0;
        long cpu = 0;
        long disk = 0;
        for (int i = 0; i < n; i++) {
            RankOverlaps.Hit h = overlaps.of(w.workerId(), (int) (w.firstRank() + i));
            ranks[i] = w.firstRank() + i;
            tokens[i] = (long) h.dev() * blockSize;
            gpu = Math.max(gpu, (long) h.dev() * blockSize);
            cpu = Math.max(cpu, (long) (h.dev() + h.host()) * blockSize);
            disk = Math.max(disk, (long) (h.dev() + h.host() + h.disk()) * blockSize);
        }
        return new Choice.Overlap(Math.max(gpu, Math.max(cpu, disk)), gpu, ranks, tokens, cpu, disk);
    }

    /**
     * Whether a selection must wait in the partition's queue (docs/api/selection.md#queueing): queueing is on and every eligible rank
     * has more active prefill than the threshold times its worker's {@code max_num_batched_tokens}.
     */
    public boolean overloaded(PartitionKey p, SelectionOptions o) {
        if (!config.queueing() || o.pinnedWorker() != null) {
            return false;
        }
        boolean any = false;
        for (WorkerEntry w : roster.catalog().schedulable(p)) {
            if (!o.admits(w)) {
                continue;
            }
            for (long rank = w.firstRank(); rank < w.firstRank() + w.rankCount(); rank++) {
                any = true;
                SlotTracker.ActiveLoad load = roster.load(p, w.workerId(), rank);
                if (load == null
                        || !LoadSignals.exceeds(
                                load.prefillTokens(), config.queueThreshold(), w.maxNumBatchedTokens())) {
                    return false;
                }
            }
        }
        return any;
    }
}
