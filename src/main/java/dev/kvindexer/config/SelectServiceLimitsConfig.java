package dev.kvindexer.config;

/**
 * What one caller or replica peer may make the selection service hold: each is a documented setting, and a request
 * over it is refused with a 4xx before anything is created.
 *
 * @param maxWorkerRanks   data-parallel ranks one worker may declare ({@code --max-worker-ranks}); each is a listener
 *                         and a scheduler row
 * @param maxBookingBlocks blocks (sequence hashes) one booking may hold ({@code --max-booking-blocks})
 * @param maxBookedBlocks  blocks all live bookings together may hold, local and mirrored from replicas
 *                         ({@code --max-booked-blocks})
 */
public record SelectServiceLimitsConfig(int maxWorkerRanks, int maxBookingBlocks, long maxBookedBlocks) {
    public static final int DEFAULT_MAX_WORKER_RANKS = 4096;
    /** The most ranks the load accounting takes for one worker (the slot tracker's own limit). */
    public static final int MAX_WORKER_RANKS = 4096;
    /** A 1 M-token prompt at block size 8. */
    public static final int DEFAULT_MAX_BOOKING_BLOCKS = 131_072;

    public static final long DEFAULT_MAX_BOOKED_BLOCKS = 8_388_608;
    public static final SelectServiceLimitsConfig DEFAULT = new SelectServiceLimitsConfig(
            DEFAULT_MAX_WORKER_RANKS, DEFAULT_MAX_BOOKING_BLOCKS, DEFAULT_MAX_BOOKED_BLOCKS);

    public SelectServiceLimitsConfig {
        if (maxWorkerRanks < 1 || maxWorkerRanks > MAX_WORKER_RANKS) {
            throw new IllegalArgumentException("--max-worker-ranks must be between 1 and " + MAX_WORKER_RANKS);
        }
        if (maxBookingBlocks < 1) {
            throw new IllegalArgumentException("--max-booking-blocks must be at least 1");
        }
        if (maxBookedBlocks < maxBookingBlocks) {
            throw new IllegalArgumentException("--max-booked-blocks must be at least --max-booking-blocks");
        }
    }
}
