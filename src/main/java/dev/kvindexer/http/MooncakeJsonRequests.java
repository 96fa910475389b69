package dev.kvindexer.http;

import static dev.kvindexer.http.MooncakeJsonError.invalid;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.ingest.Publisher;
import dev.kvindexer.web.Wire;

/**
 * The Mooncake JSON flavor's request bodies (docs/api/mooncake-json.md), bound by {@link dev.kvindexer.web.JsonBinding}:
 * one record per route. A member's type is refused in serde's words while binding; what is missing or out of range is
 * refused by each record's constructor with the flavor's own code and field, one check after another in a fixed order.
 * An alias is a {@link Wire.Fallback}: read only when the name it stands in for is not sent.
 */
final class MooncakeJsonRequests {
    private MooncakeJsonRequests() {}

    /**
     * Mooncake's model member: {@code modelname} on register, {@code model} on query; each accepts the others. Null
     * when none is sent.
     */
    private static String firstModel(String model, String modelname, String modelName) {
        return model != null ? model : modelname != null ? modelname : modelName;
    }

    private static void requireModel(String model, String code) {
        if (model == null) {
            throw invalid(code, "missing field `modelname` (or `model`)", "modelname");
        }
    }

    private static void requireInstance(String id, String code) {
        if (id == null || id.isEmpty()) {
            throw invalid(code, "missing field `instance_id`", "instance_id");
        }
    }

    /** The partition's routing group: {@code tenant_id}, or the default one without it. */
    private static String groupOf(String tenantId) {
        return tenantId == null ? PartitionKey.DEFAULT : tenantId;
    }

    /** {@code POST /register}: a publisher of vLLM, SGLang or Mooncake type, with a positive block size. */
    record Register(
            @JsonProperty("endpoint") String endpoint,
            @JsonProperty("type") String type,
            @JsonProperty("model") String model,

            @JsonProperty("modelname") @Wire.Fallback("model")
            String modelname,

            @JsonProperty("model_name") @Wire.Fallback({"model", "modelname"})
            String modelName,

            @JsonProperty("instance_id") @Wire.Id String instanceId,
            @JsonProperty("block_size") Integer blockSize,
            @JsonProperty("dp_rank") int dpRank,
            @JsonProperty("cache_group") @Wire.Signed Long cacheGroup,
            @JsonProperty("replay_endpoint") String replayEndpoint,
            @JsonProperty("additionalsalt") String additionalsalt,

            @JsonProperty("additional_salt") @Wire.Fallback("additionalsalt")
            String additionalSalt,

            @JsonProperty("lora_name") String loraName,
            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("worker_address") String workerAddress) {
        Register {
            String code = MooncakeJsonError.INVALID_REGISTRATION;
            if (endpoint == null) {
                throw invalid(code, "missing field `endpoint`", "endpoint");
            }
            if (Publisher.canonicalType(type) == null) {
                throw invalid(
                        code,
                        type == null
                                ? "missing field `type`"
                                : "unknown type `" + type + "`: expected vLLM, SGLang or Mooncake",
                        "type");
            }
            requireModel(firstModel(model, modelname, modelName), code);
            requireInstance(instanceId, code);
            if (blockSize == null) {
                throw invalid(code, "missing field `block_size`", "block_size");
            }
            if (blockSize == 0) {
                throw invalid(code, "block_size must be positive", "block_size");
            }
            if (cacheGroup != null && cacheGroup != 0) {
                throw invalid(code, "cache_group " + cacheGroup + " is not supported; only 0", "cache_group");
            }
        }

        /** The publisher's canonical type, whatever case the body spells it in. */
        String publisherType() {
            return Publisher.canonicalType(type);
        }

        String modelNamed() {
            return firstModel(model, modelname, modelName);
        }

        /** The salt under either spelling, {@code additionalsalt} first. */
        String salt() {
            return additionalsalt != null ? additionalsalt : additionalSalt;
        }

        String routingGroup() {
            return groupOf(tenantId);
        }
    }

    /** {@code POST /unregister}: one subscription, (instance_id, tenant_id, dp_rank); without a rank, rank 0. */
    record Unregister(
            @JsonProperty("instance_id") @Wire.Id String instanceId,
            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("dp_rank") int dpRank) {
        Unregister {
            requireInstance(instanceId, MooncakeJsonError.INVALID_REQUEST);
        }

        String routingGroup() {
            return groupOf(tenantId);
        }
    }

    /**
     * {@code POST /query}: token ids, hashed here with {@code lora_name} and {@code cache_salt}. {@code lora_id} is
     * taken only as −1, the base model: an adapter id cannot be mapped to the name its blocks are hashed with.
     */
    record Query(
            @JsonProperty("token_ids") int[] tokenIds,
            @JsonProperty("lora_name") String loraName,
            @JsonProperty("lora_id") @Wire.Signed Long loraId,
            @JsonProperty("cache_salt") String cacheSalt,
            @JsonProperty("model") String model,

            @JsonProperty("modelname") @Wire.Fallback("model")
            String modelname,

            @JsonProperty("model_name") @Wire.Fallback({"model", "modelname"})
            String modelName,

            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("block_size") Integer blockSize,
            @JsonProperty("instance_id") @Wire.Id String instanceId)
            implements Lookup {
        Query {
            String code = MooncakeJsonError.INVALID_REQUEST;
            if (tokenIds == null) {
                throw invalid(code, "missing field `token_ids`", "token_ids");
            }
            if (loraId != null && loraName != null) {
                throw invalid(
                        code,
                        "lora_id is deprecated and cannot be used together with lora_name; send lora_name only",
                        "lora_id");
            }
            if (loraId != null && loraId != -1) {
                throw invalid(
                        code,
                        "lora_id is not supported: an adapter id cannot be mapped to the name its blocks are "
                                + "hashed with; use lora_name",
                        "lora_id");
            }
            requireModel(firstModel(model, modelname, modelName), code);
        }

        @Override
        public String modelNamed() {
            return firstModel(model, modelname, modelName);
        }

        @Override
        public String routingGroup() {
            return groupOf(tenantId);
        }
    }

    /**
     * {@code POST /query_by_hash}: rolling sequence hashes, {@code seq_hashes} or its alias {@code block_hash} (the
     * first when both are sent), numbers or decimal strings.
     */
    record QueryByHash(
            @JsonProperty("seq_hashes") @Wire.DecimalText long[] seqHashes,

            @JsonProperty("block_hash") @Wire.DecimalText @Wire.Fallback("seq_hashes")
            long[] blockHash,

            @JsonProperty("model") String model,

            @JsonProperty("modelname") @Wire.Fallback("model")
            String modelname,

            @JsonProperty("model_name") @Wire.Fallback({"model", "modelname"})
            String modelName,

            @JsonProperty("tenant_id") String tenantId,
            @JsonProperty("block_size") Integer blockSize,
            @JsonProperty("instance_id") @Wire.Id String instanceId)
            implements Lookup {
        QueryByHash {
            String code = MooncakeJsonError.INVALID_REQUEST;
            if (seqHashes == null && blockHash == null) {
                throw invalid(code, "missing field `seq_hashes`", "seq_hashes");
            }
            requireModel(firstModel(model, modelname, modelName), code);
        }

        long[] hashes() {
            return seqHashes != null ? seqHashes : blockHash;
        }

        @Override
        public String modelNamed() {
            return firstModel(model, modelname, modelName);
        }

        @Override
        public String routingGroup() {
            return groupOf(tenantId);
        }
    }

    /** What both queries name their partition and the instance they ask about by. */
    interface Lookup {
        String modelNamed();

        String routingGroup();

        /** The partition's block size the query was hashed for, or null for whichever it has. */
        Integer blockSize();

        /** The one instance the answer is to hold even when it matches nothing, or null for all. */
        String instanceId();
    }
}
