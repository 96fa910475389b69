package dev.kvindexer.partition;

/** What a partition did with a peer's copy offered for a {@link RepairRequest}. */
public enum RepairOutcome {
    /** The stream's blocks are the peer's now, and the stream is exact again. */
    REPAIRED,
    /**
     * The copy does not cover what this node lacks (its watermark is before the gap's end, it lost batches too, or it
     * is older than what this node applied and the engine cannot replay the difference): another peer may do.
     */
    BEHIND,
    /** Nothing to repair any more: the stream started over, was removed, or a newer listener generation runs. */
    OUTDATED
}
