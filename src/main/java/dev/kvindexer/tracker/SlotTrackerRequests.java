package dev.kvindexer.tracker;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.web.Wire;

/** The slot tracker's request bodies (docs/api/slot-tracker.md), bound by {@link dev.kvindexer.web.JsonBinding}. */
final class SlotTrackerRequests {
    private SlotTrackerRequests() {}

    /**
     * A body that names its tracker: its model and {@code routing_group}, or an older client's {@code tenant_id} when
     * it sends no {@code routing_group}; {@code "default"} without either.
     */
    interface Scoped {
        String routingGroup();

        String modelName();

        String tenantId();

        default PartitionKey scope() {
            return new PartitionKey(modelName(), routingGroup() != null ? routingGroup() : tenantId());
        }
    }

    /** {@code POST /register}: a worker's ranks {@code [dp_start, dp_start + dp_size)}. */
    record Register(
            @JsonProperty("routing_group") String routingGroup,
            @JsonProperty("model_name") @Wire.Required String modelName,

            @JsonProperty("tenant_id") @Wire.Fallback("routing_group")
            String tenantId,

            @JsonProperty("worker_id") @Wire.Required long workerId,
            @JsonProperty("block_size") @Wire.Required int blockSize,

            @JsonProperty("dp_start") @Wire.Required @Wire.U32
            long dpStart,

            @JsonProperty("dp_size") @Wire.Required @Wire.U32
            long dpSize)
            implements Scoped {}

    /** {@code POST /unregister}. */
    record Unregister(
            @JsonProperty("routing_group") String routingGroup,
            @JsonProperty("model_name") @Wire.Required String modelName,

            @JsonProperty("tenant_id") @Wire.Fallback("routing_group")
            String tenantId,

            @JsonProperty("worker_id") @Wire.Required long workerId)
            implements Scoped {}

    /** {@code POST /add}: a request placed on a worker's rank, with its prompt's sequence hashes. */
    record Add(
            @JsonProperty("routing_group") String routingGroup,
            @JsonProperty("model_name") @Wire.Required String modelName,

            @JsonProperty("tenant_id") @Wire.Fallback("routing_group")
            String tenantId,

            @JsonProperty("request_id") @Wire.Required String requestId,
            @JsonProperty("worker_id") @Wire.Required long workerId,

            @JsonProperty("dp_rank") @Wire.Required @Wire.U32
            long dpRank,

            @JsonProperty("sequence_hashes") @Wire.Required long[] sequenceHashes,
            @JsonProperty("new_isl_tokens") long newIslTokens)
            implements Scoped {}

    /** {@code POST /prefill_complete} and {@code /free}: a request by its id. */
    record RequestChange(
            @JsonProperty("routing_group") String routingGroup,
            @JsonProperty("model_name") @Wire.Required String modelName,

            @JsonProperty("tenant_id") @Wire.Fallback("routing_group")
            String tenantId,

            @JsonProperty("request_id") @Wire.Required String requestId)
            implements Scoped {}

    /** {@code POST /potential_loads}: what each rank's load would be with this prompt added. */
    record PotentialLoads(
            @JsonProperty("routing_group") String routingGroup,
            @JsonProperty("model_name") @Wire.Required String modelName,

            @JsonProperty("tenant_id") @Wire.Fallback("routing_group")
            String tenantId,

            @JsonProperty("sequence_hashes") @Wire.Required long[] sequenceHashes,
            @JsonProperty("new_isl_tokens") long newIslTokens)
            implements Scoped {}
}
