package dev.kvindexer.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.web.Wire;
import io.vertx.core.json.JsonObject;

/**
 * The bodies of {@code POST /events} (docs/protocol/events.md#standardized-kv-events), bound by
 * {@link dev.kvindexer.web.JsonBinding}. An event is bound in two steps, the members every event has and then those
 * of its {@code event_type}, so a member its type does not have is never read: a {@code cleared} event adds nothing.
 */
final class StandardEventRequests {
    private StandardEventRequests() {}

    /** The body: {@code {"events": [...]}}, or, without {@code events}, one event itself. */
    record Batch(@JsonProperty("events") JsonObject[] events) {}

    /**
     * The members of every event. {@code backend_id} is checked by the route, after the partition it names is
     * found, as are the rank's and block size's bounds.
     */
    record Event(
            @JsonProperty("event_type") @Wire.Required String eventType,
            @JsonProperty("event_id") @Wire.Required long eventId,
            @JsonProperty("model_name") @Wire.Required String modelName,
            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("backend_id") @Wire.Id String backendId,
            @JsonProperty("dp_rank") int dpRank,
            @JsonProperty("block_size") Integer blockSize,
            @JsonProperty("medium") String medium,
            @JsonProperty("lora_name") String loraName,
            @JsonProperty("additional_salt") String additionalSalt) {}

    /**
     * A {@code stored} event's blocks: {@code parent_hash} or {@code base_block_idx} places the first, and
     * {@code token_ids}, when sent, give their local hashes.
     */
    record Stored(
            @JsonProperty("seq_hashes") @Wire.Required @Wire.DecimalText
            long[] seqHashes,

            @JsonProperty("parent_hash") Long parentHash,
            @JsonProperty("base_block_idx") Integer baseBlockIdx,
            @JsonProperty("token_ids") int[] tokenIds) {}

    /** A {@code removed} event's blocks. */
    record Removed(
            @JsonProperty("seq_hashes") @Wire.Required @Wire.DecimalText
            long[] seqHashes) {}
}
