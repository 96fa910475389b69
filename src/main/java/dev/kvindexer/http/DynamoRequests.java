package dev.kvindexer.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.web.Wire;

/**
 * The Dynamo-flavor request bodies (docs/api/dynamo.md), bound by {@link dev.kvindexer.web.JsonBinding}: one record
 * per route, named by its wire fields. A string with a default that must not be sent as null is
 * {@link Wire.NullRefused}, as serde reads it.
 */
final class DynamoRequests {
    private DynamoRequests() {}

    /** {@code POST /register}. The salts are checked as strings and otherwise unused, as the reference does. */
    record Register(
            @JsonProperty("instance_id") @Wire.Required long instanceId,
            @JsonProperty("endpoint") @Wire.Required String endpoint,
            @JsonProperty("model_name") @Wire.Required String modelName,
            @JsonProperty("block_size") @Wire.Required int blockSize,
            @JsonProperty("routing_group") @Wire.NullRefused String routingGroup,
            @JsonProperty("tenant_id") @Wire.NullRefused String tenantId,
            @JsonProperty("dp_rank") int dpRank,
            @JsonProperty("replay_endpoint") String replayEndpoint,
            @JsonProperty("additional_salt") String additionalSalt,
            @JsonProperty("additionalsalt") String additionalsalt,
            @JsonProperty("worker_address") String workerAddress) {}

    /** {@code POST /unregister}: group, tenant and rank may each be left out, null meaning absent. */
    record Unregister(
            @JsonProperty("instance_id") @Wire.Required long instanceId,
            @JsonProperty("model_name") @Wire.Required String modelName,
            @JsonProperty("routing_group") String routingGroup,
            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("dp_rank") Integer dpRank) {}

    /** {@code POST /query}: token ids and the partition they are asked of. */
    record Query(
            @JsonProperty("token_ids") @Wire.Required int[] tokenIds,
            @JsonProperty("model_name") @Wire.Required String modelName,
            @JsonProperty("routing_group") @Wire.NullRefused String routingGroup,
            @JsonProperty("tenant_id") @Wire.NullRefused String tenantId) {}

    /**
     * What {@code /query} hashes its tokens with, read once the partition is known: a model nobody registered is a
     * 404 before these members are looked at.
     */
    record HashSeed(
            @JsonProperty("lora_name") String loraName,
            @JsonProperty("cache_salt") String cacheSalt) {}

    /** {@code POST /query_by_hash}: the engine's own block hashes, a salt refused (it is in the hashes already). */
    record QueryByHash(
            @JsonProperty("block_hashes") @Wire.Required @Wire.Signed
            long[] blockHashes,

            @JsonProperty("model_name") @Wire.Required String modelName,
            @JsonProperty("routing_group") @Wire.NullRefused String routingGroup,
            @JsonProperty("tenant_id") @Wire.NullRefused String tenantId,
            @JsonProperty("cache_salt") String cacheSalt) {}

    /** {@code POST /query_tiered_by_hash}: keyed by {@code routing_group} alone. */
    record QueryTieredByHash(
            @JsonProperty("block_hashes") @Wire.Required @Wire.Signed
            long[] blockHashes,

            @JsonProperty("model_name") @Wire.Required String modelName,
            @JsonProperty("routing_group") @Wire.NullRefused String routingGroup) {}

    /** The test routes' pause and resume of one instance rank's listener. */
    record InstanceRank(
            @JsonProperty("instance_id") @Wire.Required long instanceId,
            @JsonProperty("dp_rank") int dpRank) {}

    /** {@code POST /register_peer} and {@code /deregister_peer}. */
    record Peer(@JsonProperty("url") @Wire.Required String url) {}
}
