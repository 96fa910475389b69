package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;

/** A booked reservation, local or mirrored: what it booked and how far its lifecycle has gone. */
final class Held {
    final PartitionKey partition;
    final int blockSize;
    final long workerId;
    final int dpRank;
    final String loraName;
    final long[] sequenceHashes;
    final long prefillHint;
    final boolean trackPrefill;
    final Long expectedOutputTokens;
    final long bookedAtMillis;
    final long incarnation;
    /**
     * When it was booked or mirrored here, on the monotonic clock; for a booking of this replica's own, when its
     * cluster-wide claim completed.
     */
    long appliedAt;

    boolean prefillDone;
    long outputBlocks;
    double decay = Double.NaN;
    long version = 1;

    Held(
            PartitionKey partition,
            int blockSize,
            long workerId,
            int dpRank,
            String loraName,
            long[] sequenceHashes,
            long prefillHint,
            boolean trackPrefill,
            Long expectedOutputTokens,
            long bookedAtMillis,
            long incarnation,
            long appliedAt) {
        this.partition = partition;
        this.blockSize = blockSize;
        this.workerId = workerId;
        this.dpRank = dpRank;
        this.loraName = loraName;
        this.sequenceHashes = sequenceHashes;
        this.prefillHint = prefillHint;
        this.trackPrefill = trackPrefill;
        this.expectedOutputTokens = expectedOutputTokens;
        this.bookedAtMillis = bookedAtMillis;
        this.incarnation = incarnation;
        this.appliedAt = appliedAt;
    }

    /** The prefill tokens it puts on its rank: none when prefill is not tracked. */
    long prefillLoad() {
        return trackPrefill ? prefillHint : 0;
    }

    ReservationRecord record(String id) {
        return new ReservationRecord(
                id,
                partition,
                blockSize,
                workerId,
                dpRank,
                loraName,
                sequenceHashes,
                prefillHint,
                trackPrefill,
                expectedOutputTokens,
                prefillDone,
                outputBlocks,
                decay,
                bookedAtMillis,
                incarnation,
                version);
    }
}
