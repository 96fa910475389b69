package dev.kvindexer.select;

/**
 * A change of active load that replicas exchange (SPEC §12.13.2): a booking, its prefill completing, its release. The
 * fields mirror Dynamo's {@code ActiveSequenceEvent} inside a {@code ScopedReplicaEvent}.
 */
public sealed interface LoadEvent {
    Partition partition();

    int blockSize();

    String requestId();

    long workerId();

    int dpRank();

    String loraName();

    /** A reservation was booked. */
    record Added(Partition partition, int blockSize, String requestId, long workerId, int dpRank, String loraName,
                 long[] sequenceHashes, boolean trackPrefill, Long expectedOutputTokens, long prefillHint)
            implements LoadEvent {
    }

    /** Its prompt was processed: the prefill tokens stop counting. */
    record PrefillCompleted(Partition partition, int blockSize, String requestId, long workerId, int dpRank,
                            String loraName) implements LoadEvent {
    }

    /** It was released. */
    record Freed(Partition partition, int blockSize, String requestId, long workerId, int dpRank, String loraName)
            implements LoadEvent {
    }
}
