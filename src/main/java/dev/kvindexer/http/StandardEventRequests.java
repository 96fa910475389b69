package dev.kvindexer.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.web.Wire;
import io.vertx.core.json.JsonObject;

/**
 * The bodies of {@code POST /events} (docs/protocol/events.md#standardized-kv-events), bound by
 * {@link dev.kvindexer.web.JsonBinding}. An event is bound a step at a time, in the order the reference reads it: what
 * names it and its partition, its instance, its placement, then what its {@code event_type} has. A member its type
 * does not have is never read (a {@code cleared} event adds nothing), and the first refusal is the reference's.
 */
final class StandardEventRequests {
    private StandardEventRequests() {}

    /** The body: {@code {"events": [...]}}, or, without {@code events}, one event itself. */
    record Batch(@JsonProperty("events") JsonObject[] events) {}

    /**
     * The members that name an event and its partition, read first: an event for a model nobody registered is a 404
     * before its other members are looked at.
     */
    record Event(
            @JsonProperty("event_type") @Wire.Required String eventType,
            @JsonProperty("event_id") @Wire.Required long eventId,
            @JsonProperty("model_name") @Wire.Required String modelName,
            @JsonProperty("tenant_id") String tenantId) {}

    /** The instance that sent the event, read once the partition is found, and checked to be one of its own. */
    record Source(@JsonProperty("backend_id") @Wire.Id String backendId) {}

    /** Where in the instance the blocks are, read once the instance is known. */
    record Placement(
            @JsonProperty("dp_rank") int dpRank,
            @JsonProperty("block_size") Integer blockSize,
            @JsonProperty("medium") String medium,
            @JsonProperty("lora_name") String loraName,
            @JsonProperty("additional_salt") String additionalSalt) {}

    /** A {@code stored} or {@code removed} event's blocks, by their sequence hashes. */
    record Blocks(
            @JsonProperty("seq_hashes") @Wire.Required @Wire.DecimalText
            long[] seqHashes) {}

    /**
     * Where a {@code stored} event's first block goes: under {@code parent_hash} (here only whether it is sent, its
     * value read after the placement is checked), or at {@code base_block_idx}.
     */
    record Anchor(
            @JsonProperty("parent_hash") Object parentHash,
            @JsonProperty("base_block_idx") Integer baseBlockIdx) {}

    /** The parent a {@code stored} event names. */
    record Parent(
            @JsonProperty("parent_hash") @Wire.Required long parentHash) {}

    /** A {@code stored} event's tokens, when sent: they give its blocks' local hashes. */
    record Tokens(@JsonProperty("token_ids") int[] tokenIds) {}
}
