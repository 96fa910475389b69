package dev.kvindexer.load;

import dev.kvindexer.event.PartitionKey;

/**
 * A change of active load that replicas exchange (docs/api/selection.md#replica-sync): a booking, its prefill completing, its release. The
 * fields mirror Dynamo's {@code ActiveSequenceEvent} inside a {@code ScopedReplicaEvent}.
 */
public sealed interface LoadEvent {
    PartitionKey partition();

    int blockSize();

    String requestId();

    long workerId();

    int dpRank();

    String loraName();

    /** A reservation was booked. */
    record Added(
            PartitionKey partition,
            int blockSize,
            String requestId,
            long workerId,
            int dpRank,
            String loraName,
            long[] sequenceHashes,
            boolean trackPrefill,
            Long expectedOutputTokens,
            long prefillHint)
            implements LoadEvent {}

    /** Its prompt was processed: the prefill tokens stop counting. */
    record PrefillCompleted(
            PartitionKey partition, int blockSize, String requestId, long workerId, int dpRank, String loraName)
            implements LoadEvent {}

    /** It was released. */
    record Freed(PartitionKey partition, int blockSize, String requestId, long workerId, int dpRank, String loraName)
            implements LoadEvent {}
}
