package dev.kvindexer.select;

/**
 * A request's {@code router_config_override} (docs/api/selection.md#parameters): each member null when absent. The deprecated
 * {@code overlap_score_weight} maps to {@code prefill_load_scale}, and to a zero credit when it is 0, over the
 * canonical members.
 */
public record ConfigOverride(
        Double credit,
        Double scale,
        Double overlapWeight,
        Double temperature,
        Boolean assumeKvReuse,
        Boolean trackPrefill,
        Double sharedCacheMultiplier) {
    public static final ConfigOverride NONE = new ConfigOverride(null, null, null, null, null, null, null);

    /** Checks the ranges a body must respect; the message names the member. */
    public ConfigOverride {
        if (credit != null && !(credit >= 0 && Double.isFinite(credit))) {
            throw new IllegalArgumentException("overlap_score_credit must be a finite number >= 0");
        }
        if (scale != null && !(scale >= 0 && Double.isFinite(scale))) {
            throw new IllegalArgumentException("prefill_load_scale must be >= 0");
        }
        if (overlapWeight != null && !(overlapWeight >= 0 && Double.isFinite(overlapWeight))) {
            throw new IllegalArgumentException("overlap_score_weight must be >= 0");
        }
        if (temperature != null && !(temperature >= 0 && Double.isFinite(temperature))) {
            throw new IllegalArgumentException("router_temperature must be >= 0");
        }
        if (sharedCacheMultiplier != null && !(sharedCacheMultiplier >= 0 && sharedCacheMultiplier <= 1)) {
            throw new IllegalArgumentException("shared_cache_multiplier must be between 0 and 1");
        }
    }

    public double credit(SelectionConfig c) {
        if (overlapWeight != null && overlapWeight == 0) {
            return 0;
        }
        return credit != null ? credit : c.credit();
    }

    public double scale(SelectionConfig c) {
        if (overlapWeight != null) {
            return overlapWeight;
        }
        return scale != null ? scale : c.scale();
    }

    public double temperature(SelectionConfig c) {
        return temperature != null ? temperature : c.temperature();
    }

    public boolean trackPrefill(SelectionConfig c) {
        return trackPrefill != null ? trackPrefill : c.trackPrefill();
    }

    public boolean assumeKvReuse(SelectionConfig c) {
        return assumeKvReuse != null ? assumeKvReuse : c.assumeKvReuse();
    }
}
