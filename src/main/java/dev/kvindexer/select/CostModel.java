package dev.kvindexer.select;

/**
 * Dynamo's per-rank selection cost (docs/api/selection.md#cost), lower is better: the prefill still to do, in blocks, less the
 * cache credit, plus the decode blocks the rank would hold, plus a charge per active request. Evaluated in the
 * reference's order with IEEE doubles, because equal doubles decide ties.
 */
public final class CostModel {
    private final long isl;
    private final int blockSize;
    private final long promptBlocks;
    private final double credit;
    private final double scale;
    private final double decay;
    private final double hostWeight;
    private final double diskWeight;
    private final double requestWeight;
    private final boolean track;

    /**
     * @param isl       the prompt's length in tokens
     * @param blockSize the partition's block size
     */
    public CostModel(
            long isl,
            int blockSize,
            double credit,
            double scale,
            double decay,
            double hostWeight,
            double diskWeight,
            double requestWeight,
            boolean track) {
        this.isl = isl;
        this.blockSize = blockSize;
        this.promptBlocks = (isl + blockSize - 1) / blockSize;
        this.credit = credit;
        this.scale = scale;
        this.decay = decay;
        this.hostWeight = hostWeight;
        this.diskWeight = diskWeight;
        this.requestWeight = requestWeight;
        this.track = track;
    }

    /** The settings with a request's overrides applied. */
    public static CostModel of(long isl, int blockSize, SelectionConfig config, ConfigOverride override) {
        return new CostModel(
                isl,
                blockSize,
                override.credit(config),
                override.scale(config),
                config.decay(),
                config.hostWeight(),
                config.diskWeight(),
                config.requestWeight(),
                override.trackPrefill(config));
    }

    /** Tokens of the prompt the rank has cached, lower tiers weighted; the device tier always weighs 1. */
    public long cachedTokens(RankInputs r) {
        return Math.round((r.dev() + hostWeight * r.host() + diskWeight * r.disk()) * blockSize);
    }

    /** The prompt tokens the rank would still prefill: {@code effective_prefill_tokens}. */
    public long effectivePrefill(RankInputs r) {
        return isl - Math.min(cachedTokens(r), isl);
    }

    /** The blocks of device, host and disk credit the cost subtracts, without the load decay. */
    public double creditBlocks(RankInputs r) {
        return credit * r.dev() + hostWeight * r.host() + diskWeight * r.disk();
    }

    /** The rank's cost; {@code minPrefill} is the least active prefill over the eligible ranks. */
    public double logit(RankInputs r, long minPrefill) {
        long rawTokens = 0;
        if (track) {
            long cached = cachedTokens(r);
            rawTokens = r.prefill() + (isl - Math.min(cached, isl)) + cached;
        }
        double rawBlocks = (double) rawTokens / blockSize;
        double f = 1.0;
        if (track && decay != 0) {
            f = 1.0 / (1.0 + decay * ((double) (r.prefill() - minPrefill) / blockSize) / promptBlocks);
        }
        double creditBlocks = (credit * f) * r.dev() + hostWeight * r.host() + diskWeight * r.disk();
        double adjusted = Math.max(0.0, rawBlocks - creditBlocks);
        double decode = r.decode() + r.newBlocks();
        double logit = scale * adjusted + decode + requestWeight * r.requests();
        return r.taintMultiplier() == 1.0 ? logit : logit * r.taintMultiplier();
    }

    /** {@code exp(-tanh(sum))} of the preferred-taint weights a worker matches (docs/api/selection.md#routing-constraints). */
    public static double taintMultiplier(double matchedWeightSum) {
        return Math.exp(-Math.tanh(matchedWeightSum));
    }
}
