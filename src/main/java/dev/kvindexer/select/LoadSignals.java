package dev.kvindexer.select;

/**
 * What a selection answer tells of the chosen rank's load (docs/api/selection.md#load-signals): whether its decode side
 * is busy and, for an advisory selection, its prefill load against its capacity. A signal whose threshold or capacity
 * is unknown is null, and the answer leaves it out rather than guess.
 *
 * @param decodeBusy {@code decode_busy}; null without a decode threshold or the worker's {@code total_kv_blocks}
 * @param workerLoad {@code worker_load}; null unless the selection was advisory
 */
public record LoadSignals(Boolean decodeBusy, WorkerLoad workerLoad) {
    /**
     * The prefill capacity the reference assumes for a worker without {@code max_num_batched_tokens}: so large that
     * such a worker never counts as busy or overloaded in practice.
     */
    static final long DEFAULT_PREFILL_CAPACITY = 10_000_000L;

    /**
     * The chosen rank's load as an advisory selection reports it.
     *
     * @param prefillTokenCapacity the worker's {@code max_num_batched_tokens}, or {@link #DEFAULT_PREFILL_CAPACITY}
     * @param totalKvBlocks        the worker's {@code total_kv_blocks}, null when not registered
     * @param prefillBusy          {@code prefill_busy}; null without a prefill threshold
     */
    public record WorkerLoad(
            long activePrefillTokens, long prefillTokenCapacity, Long totalKvBlocks, Boolean prefillBusy) {}

    /** The signals of {@code c} under {@code config}'s thresholds; {@code advisory} adds the worker's load. */
    public static LoadSignals of(Choice c, SelectionConfig config, boolean advisory) {
        Long totalKvBlocks = c.worker().totalKvBlocks();
        Boolean decodeBusy = Double.isNaN(config.decodeBusyThreshold()) || totalKvBlocks == null
                ? null
                : exceeds(c.potentialDecodeBlocks(), config.decodeBusyThreshold(), totalKvBlocks);
        if (!advisory) {
            return new LoadSignals(decodeBusy, null);
        }
        Long batched = c.worker().maxNumBatchedTokens();
        long capacity = batched == null ? DEFAULT_PREFILL_CAPACITY : batched;
        Boolean prefillBusy = Double.isNaN(config.prefillBusyThreshold())
                ? null
                : exceeds(c.activePrefillTokens(), config.prefillBusyThreshold(), capacity);
        return new LoadSignals(
                decodeBusy, new WorkerLoad(c.activePrefillTokens(), capacity, totalKvBlocks, prefillBusy));
    }

    /**
     * Whether {@code load} is over {@code threshold} times {@code capacity}, compared in doubles as the reference does,
     * so a load exactly at the line is not over it. Capacities are u64s held in longs.
     */
    static boolean exceeds(long load, double threshold, long capacity) {
        return (double) load > threshold * unsigned(capacity);
    }

    private static double unsigned(long v) {
        return v >= 0 ? v : (double) (v >>> 1) * 2.0 + (v & 1);
    }
}
