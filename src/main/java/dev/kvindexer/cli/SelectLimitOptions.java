package dev.kvindexer.cli;

import dev.kvindexer.config.SelectServiceLimitsConfig;
import picocli.CommandLine.Option;

/** The selection service's bounds, shared by {@code select-service} and {@code serve --select-port}. */
final class SelectLimitOptions {
    @Option(
            names = "--max-worker-ranks",
            description =
                    "Data-parallel ranks one worker may declare; a larger "
                            + "data_parallel_size is refused with 422 (env <PREFIX>MAX_WORKER_RANKS; default: ${DEFAULT-VALUE}).")
    int maxWorkerRanks;

    @Option(
            names = "--max-booking-blocks",
            description = "Blocks one reservation may hold; a larger one is refused "
                    + "with 422, and a replica's dropped (env <PREFIX>MAX_BOOKING_BLOCKS; default: ${DEFAULT-VALUE}).")
    int maxBookingBlocks;

    @Option(
            names = "--max-booked-blocks",
            description = "Blocks all active reservations may hold together, mirrored "
                    + "ones included; past it a booking is refused with 429 (env <PREFIX>MAX_BOOKED_BLOCKS; "
                    + "default: ${DEFAULT-VALUE}).")
    long maxBookedBlocks;

    SelectServiceLimitsConfig limits() {
        return new SelectServiceLimitsConfig(maxWorkerRanks, maxBookingBlocks, maxBookedBlocks);
    }
}
