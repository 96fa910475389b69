package dev.kvindexer.select;

import java.util.Locale;
import java.util.Map;

/**
 * The router settings a selection uses (docs/api/selection.md#parameters), read from Dynamo's {@code DYN_ROUTER_*} environment.
 * Unparsable numbers and booleans keep their defaults; values out of range are a startup error.
 *
 * @param credit               {@code overlap_score_credit}: blocks of device overlap credited per cached block
 * @param scale                {@code prefill_load_scale}: weight of the prefill term
 * @param decay                {@code overlap_score_credit_decay}: how fast a loaded rank's credit fades
 * @param requestWeight        {@code decode_active_request_weight}: cost of each active request
 * @param hostWeight           {@code host_cache_hit_weight}
 * @param diskWeight           {@code disk_cache_hit_weight}
 * @param temperature          {@code router_temperature}: 0 picks the cheapest rank, above samples by cost
 * @param trackPrefill         {@code router_track_prefill_tokens}
 * @param assumeKvReuse        {@code router_assume_kv_reuse}: token prompts book their real sequence hashes
 * @param useKvEvents          {@code use_kv_events}: workers publish KV events, one endpoint per rank
 * @param queueThreshold       {@code router_queue_threshold}, NaN when unset (no queueing)
 * @param requestExpiryMillis  active reservations older than this are dropped
 * @param approximateTtlMillis with KV events off, how long a booked prompt's blocks count as cached on its rank
 * @param prefillBusyThreshold {@code conditional_disagg_prefill_busy_threshold}, NaN when unset (no {@code prefill_busy})
 * @param decodeBusyThreshold  {@code conditional_disagg_decode_busy_threshold}, NaN when unset (no {@code decode_busy})
 * @param predictedTtlMillis   {@code router_predicted_ttl_secs}: with KV events on, how long a booking's blocks count as
 *                             predicted on its rank ({@link PredictedBlocks}); 0 when unset (none recorded)
 */
public record SelectionConfig(
        double credit,
        double scale,
        double decay,
        double requestWeight,
        double hostWeight,
        double diskWeight,
        double temperature,
        boolean trackPrefill,
        boolean assumeKvReuse,
        boolean useKvEvents,
        double queueThreshold,
        long requestExpiryMillis,
        long approximateTtlMillis,
        double prefillBusyThreshold,
        double decodeBusyThreshold,
        long predictedTtlMillis) {
    public static final SelectionConfig DEFAULTS = new SelectionConfig(
            1.0,
            1.0,
            0.0,
            0.0,
            0.75,
            0.25,
            0.0,
            true,
            true,
            true,
            Double.NaN,
            300_000,
            120_000,
            Double.NaN,
            Double.NaN,
            0);

    public SelectionConfig {
        check(credit >= 0 && Double.isFinite(credit), "overlap_score_credit must be a finite number >= 0");
        check(scale >= 0 && Double.isFinite(scale), "prefill_load_scale must be >= 0");
        check(decay >= 0 && Double.isFinite(decay), "overlap_score_credit_decay must be >= 0");
        check(requestWeight >= 0 && Double.isFinite(requestWeight), "decode_active_request_weight must be >= 0");
        check(hostWeight >= 0 && hostWeight <= 1, "host_cache_hit_weight must be between 0 and 1");
        check(diskWeight >= 0 && diskWeight <= 1, "disk_cache_hit_weight must be between 0 and 1");
        check(temperature >= 0 && Double.isFinite(temperature), "router_temperature must be >= 0");
        checkUnsetOrNonNegative(queueThreshold, "router_queue_threshold");
        check(requestExpiryMillis > 0, "active request expiry must be positive");
        check(approximateTtlMillis >= 0, "router_ttl_secs must be >= 0");
        checkUnsetOrNonNegative(prefillBusyThreshold, "conditional_disagg_prefill_busy_threshold");
        checkUnsetOrNonNegative(decodeBusyThreshold, "conditional_disagg_decode_busy_threshold");
        check(predictedTtlMillis >= 0, "router_predicted_ttl_secs must be > 0");
        // Dynamo's words: with no events, bookings already go into the index itself.
        check(
                predictedTtlMillis == 0 || useKvEvents,
                "router_predicted_ttl_secs requires use_kv_events=true; do not combine a primary approximate indexer "
                        + "with a side approximate indexer");
    }

    /** Whether bookings are recorded as predicted entries beside the event-driven index. */
    public boolean predicting() {
        return predictedTtlMillis > 0;
    }

    public boolean queueing() {
        return !Double.isNaN(queueThreshold);
    }

    /**
     * The settings Dynamo's environment variables give. Throws {@link IllegalArgumentException} with
     * {@code invalid KV router configuration: ...} for a value out of range.
     */
    public static SelectionConfig fromEnvironment(Map<String, String> env) {
        if (env.containsKey("DYN_ROUTER_POLICY_CONFIG")) {
            NotApplied.report(
                    "DYN_ROUTER_POLICY_CONFIG",
                    "policy classes are not implemented; every selection shares the one queue");
        }
        SelectionConfig d = DEFAULTS;
        boolean useKvEvents = truth(env, "DYN_ROUTER_USE_KV_EVENTS", truth(env, "DYN_USE_KV_EVENTS", d.useKvEvents));
        try {
            checkCachePolicy(env.get("DYN_ROUTER_APPROXIMATE_CACHE_POLICY"), useKvEvents);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid KV router configuration: " + e.getMessage(), e);
        }
        double credit = number(env, "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT", d.credit);
        double scale = number(env, "DYN_ROUTER_PREFILL_LOAD_SCALE", d.scale);
        String weightVar = env.containsKey("DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT")
                ? "DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT"
                : "DYN_OVERLAP_SCORE_WEIGHT";
        double weight = number(env, weightVar, Double.NaN);
        if (!Double.isNaN(weight)) {
            scale = weight;
            if (weight == 0) {
                credit = 0;
            }
        }
        try {
            return new SelectionConfig(
                    credit,
                    scale,
                    number(env, "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY", d.decay),
                    number(env, "DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT", d.requestWeight),
                    number(env, "DYN_ROUTER_HOST_CACHE_HIT_WEIGHT", d.hostWeight),
                    number(env, "DYN_ROUTER_DISK_CACHE_HIT_WEIGHT", d.diskWeight),
                    number(env, "DYN_ROUTER_TEMPERATURE", d.temperature),
                    truth(env, "DYN_ROUTER_TRACK_PREFILL_TOKENS", d.trackPrefill),
                    truth(env, "DYN_ROUTER_ASSUME_KV_REUSE", d.assumeKvReuse),
                    useKvEvents,
                    number(env, "DYN_ROUTER_QUEUE_THRESHOLD", d.queueThreshold),
                    Math.round(number(env, "DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS", d.requestExpiryMillis / 1000.0)
                            * 1000),
                    Math.round(number(env, "DYN_ROUTER_TTL_SECS", d.approximateTtlMillis / 1000.0) * 1000),
                    number(env, "DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD", d.prefillBusyThreshold),
                    number(env, "DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD", d.decodeBusyThreshold),
                    predictedTtlMillis(env.get("DYN_ROUTER_PREDICTED_TTL_SECS")));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid KV router configuration: " + e.getMessage(), e);
        }
    }

    /**
     * {@code router_predicted_ttl_secs} in milliseconds, 0 when unset or unparsable. A value that is set must be a
     * positive, finite number of seconds of at least a millisecond: Dynamo's duration conversion would fail on it.
     */
    private static long predictedTtlMillis(String v) {
        if (v == null) {
            return 0;
        }
        double secs;
        try {
            secs = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
        if (!(secs * 1000 >= 1) || !Double.isFinite(secs)) {
            return -1;
        }
        return Math.round(secs * 1000);
    }

    /**
     * {@code router_approximate_cache_policy}: {@code ttl} (the default) or {@code lru}. Predicted entries are
     * TTL-only, so {@code lru} with KV events on is refused, as Dynamo refuses it; with KV events off the approximate
     * index keeps its TTL retention, as Dynamo's selection service does.
     */
    private static void checkCachePolicy(String v, boolean useKvEvents) {
        if (v == null) {
            return;
        }
        switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "ttl" -> {}
            case "lru" -> {
                check(
                        !useKvEvents,
                        "router_approximate_cache_policy=lru requires use_kv_events=false; the local side indexer is "
                                + "TTL-only");
                NotApplied.report(
                        "router_approximate_cache_policy=lru", "the approximate index of bookings keeps TTL retention");
            }
            default ->
                throw new IllegalArgumentException(
                        "router_approximate_cache_policy must be ttl or lru, not `" + v.trim() + "`");
        }
    }

    private static double number(Map<String, String> env, String name, double fallback) {
        String v = env.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** Dynamo's truthy words; anything else keeps the default. */
    private static boolean truth(Map<String, String> env, String name, boolean fallback) {
        String v = env.get(name);
        if (v == null) {
            return fallback;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes", "on" -> true;
            case "0", "false", "no", "off" -> false;
            default -> fallback;
        };
    }

    /** An optional threshold: NaN stands for unset. */
    private static void checkUnsetOrNonNegative(double threshold, String name) {
        check(Double.isNaN(threshold) || threshold >= 0, name + " must be >= 0");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
