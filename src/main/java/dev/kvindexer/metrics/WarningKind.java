package dev.kvindexer.metrics;

/** The {@code warning_kind} label values this node emits, spelled once. */
public final class WarningKind {
    public static final String DECODE_ERROR = "decode_error";
    public static final String MALFORMED_FRAME = "malformed_frame";
    public static final String BLOCK_SIZE_MISMATCH = "block_size_mismatch";
    public static final String FILTERED_GROUP = "filtered_group";
    public static final String STALE_BATCH = "stale_batch";
    /**
     * Standardized KV events (docs/protocol/events.md#standardized-kv-events) skipped because their event_id was at or
     * below the stream's last.
     */
    public static final String STALE_EVENT = "stale_event";
    /** Standardized KV events missing between two event_ids of one stream (no replay exists for them). */
    public static final String EVENT_ID_GAP = "event_id_gap";

    public static final String BATCHES_LOST = "batches_lost";
    public static final String REPLAY_INCOMPLETE = "replay_incomplete";
    /** Replayed batches outside the range asked for, skipped. */
    public static final String REPLAY_OUT_OF_RANGE = "replay_out_of_range";

    public static final String ENGINE_RESTART = "engine_restart";

    private WarningKind() {}
}
