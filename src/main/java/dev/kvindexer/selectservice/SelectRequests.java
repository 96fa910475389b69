package dev.kvindexer.selectservice;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.cluster.PeerSet;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.AffinityTarget;
import dev.kvindexer.select.ConfigOverride;
import dev.kvindexer.select.SessionContext;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.Wire;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The selection service's request bodies (docs/api/selection.md), bound by {@link dev.kvindexer.web.JsonBinding}. A
 * route reads its body in steps, one record a step, as the reference reads it: a member a step does not name is never
 * type-checked, and a record's components are checked in the order listed, so the first refusal is the reference's.
 */
final class SelectRequests {
    private SelectRequests() {}

    /** {@code /select} and {@code /select_and_reserve}: where, how, and which workers may serve. */
    record Select(
            @JsonProperty("model_name") String modelName,
            @JsonProperty("routing_group") String routingGroup,

            @JsonProperty("router_config_override") @Wire.Expected("a struct")
            RouterConfig routerConfigOverride,

            @JsonProperty("allowed_worker_ids") long[] allowedWorkerIds,

            @JsonProperty("pinned_worker") @Wire.Expected("a struct")
            Pinned pinnedWorker,

            @JsonProperty("routing_constraints") @Wire.Expected("a struct")
            Constraints routingConstraints,

            @JsonProperty("expected_output_tokens") @Wire.U32
            Long expectedOutputTokens,

            @JsonProperty("selection_id") String selectionId,
            @JsonProperty("lora_name") String loraName,

            // The booking key of Dynamo's earlier selection service, which its gateway EPP sends beside selection_id.
            @JsonProperty("reservation_id") String reservationId) {
        PartitionKey partition() {
            return new PartitionKey(modelName, routingGroup);
        }

        /** What the selection is booked and found again under: {@code reservation_id} when given. */
        String bookingId() {
            return reservationId != null ? reservationId : selectionId;
        }
    }

    /** {@code /potential_loads} and {@code /overlap_scores}. */
    record Inspect(
            @JsonProperty("model_name") String modelName,
            @JsonProperty("routing_group") String routingGroup,

            @JsonProperty("router_config_override") @Wire.Expected("a struct")
            RouterConfig routerConfigOverride) {
        PartitionKey partition() {
            return new PartitionKey(modelName, routingGroup);
        }
    }

    /** {@code router_config_override}: a value out of range is a 422 like any other shape error. */
    record RouterConfig(
            @JsonProperty("overlap_score_credit") Double overlapScoreCredit,
            @JsonProperty("prefill_load_scale") Double prefillLoadScale,
            @JsonProperty("overlap_score_weight") Double overlapScoreWeight,
            @JsonProperty("router_temperature") Double routerTemperature,
            @JsonProperty("assume_kv_reuse") Boolean assumeKvReuse,
            @JsonProperty("track_prefill_tokens") Boolean trackPrefillTokens,
            @JsonProperty("shared_cache_multiplier") Double sharedCacheMultiplier) {
        RouterConfig {
            config(overlapScoreCredit, prefillLoadScale, overlapScoreWeight, routerTemperature, sharedCacheMultiplier);
        }

        /** The override a body sent, or none without one. */
        static ConfigOverride of(RouterConfig o) {
            return o == null
                    ? ConfigOverride.NONE
                    : new ConfigOverride(
                            o.overlapScoreCredit,
                            o.prefillLoadScale,
                            o.overlapScoreWeight,
                            o.routerTemperature,
                            o.assumeKvReuse,
                            o.trackPrefillTokens,
                            o.sharedCacheMultiplier);
        }

        /** Checked as the record is read, so a range refusal comes before any later member's. */
        private static void config(Double credit, Double scale, Double weight, Double temperature, Double shared) {
            try {
                new ConfigOverride(credit, scale, weight, temperature, null, null, shared);
            } catch (IllegalArgumentException e) {
                throw HttpError.shape("router_config_override: " + e.getMessage());
            }
        }
    }

    /** {@code pinned_worker}. */
    record Pinned(
            @JsonProperty("worker_id") @Wire.Required long workerId,
            @JsonProperty("dp_rank") int dpRank) {}

    /** {@code routing_constraints}: a list or map of another kind is taken as none. */
    record Constraints(
            @JsonProperty("required_taints") @Wire.Lenient List<String> requiredTaints,

            @JsonProperty("preferred_taints") @Wire.Lenient @Wire.F32
            Map<String, Double> preferredTaints) {
        Constraints {
            requiredTaints = requiredTaints == null ? List.of() : requiredTaints;
            preferredTaints = preferredTaints == null ? Map.of() : preferredTaints;
        }
    }

    /** The session members, read only with session affinity on (docs/api/selection.md#session-affinity). */
    record Session(
            @JsonProperty("session_id") String sessionId,

            @JsonProperty("session_context") @Wire.Expected("struct SelectionSessionContext")
            Context sessionContext) {
        /** {@code session_context} when present, else the flat {@code session_id}; or null. */
        SessionContext session() {
            if (sessionContext != null) {
                return sessionContext.context();
            }
            return sessionId == null ? null : SessionContext.of(sessionId);
        }
    }

    /** {@code session_context}, which wins over a flat {@code session_id}. */
    record Context(
            @JsonProperty("session_id") @Wire.Required String sessionId,
            @JsonProperty("parent_session_id") String parentSessionId,
            @JsonProperty("session_final") Boolean sessionFinal,
            @JsonProperty("input_trigger") String inputTrigger) {
        Context {
            if (inputTrigger != null && SessionContext.InputTrigger.of(inputTrigger) == null) {
                throw HttpError.shape("`session_context.input_trigger`: unknown variant `" + inputTrigger
                        + "`, expected one of `user_message`, `tool_result`, `other`");
            }
        }

        SessionContext context() {
            return new SessionContext(
                    sessionId,
                    parentSessionId,
                    sessionFinal,
                    inputTrigger == null ? null : SessionContext.InputTrigger.of(inputTrigger));
        }
    }

    /** {@code affinity_target}, read whether or not session affinity is on. */
    record Affinity(
            @JsonProperty("affinity_target") @Wire.Expected("struct WorkerAffinityTarget")
            Target affinityTarget) {
        AffinityTarget target() {
            return affinityTarget == null ? null : new AffinityTarget(affinityTarget.workerId, affinityTarget.dpRank);
        }
    }

    /** {@code {"worker_id": u64, "dp_rank": u32 | null}}. */
    record Target(
            @JsonProperty("worker_id") @Wire.Required long workerId,
            @JsonProperty("dp_rank") Integer dpRank) {}

    /** {@code advisory}: a member of {@code /select} alone; a booking never reads it. */
    record Advisory(@JsonProperty("advisory") Boolean advisory) {}

    // ---- prompts (docs/api/selection.md#prompts) ----

    /** {@code mm_routing_info}, taken only when it is an object; its token ids win over {@code token_ids}. */
    record Routed(
            @JsonProperty("mm_routing_info") @Wire.Lenient RoutingTokens mmRoutingInfo) {
        /** The routing token ids, or null unless a non-empty array of them was sent. */
        int[] tokens() {
            int[] ids = mmRoutingInfo == null ? null : mmRoutingInfo.routingTokenIds;
            return ids == null || ids.length == 0 ? null : ids;
        }
    }

    /** The token ids of {@code mm_routing_info}, taken only when they are an array. */
    record RoutingTokens(
            @JsonProperty("routing_token_ids") @Wire.Lenient int[] routingTokenIds) {}

    /** {@code token_ids}, read when no routing token ids were. */
    record Tokens(@JsonProperty("token_ids") int[] tokenIds) {}

    /** What the token form of a prompt reads after its tokens. */
    record TokenSeed(
            @JsonProperty("lora_name") String loraName,
            @JsonProperty("cache_salt") String cacheSalt,
            @JsonProperty("is_eagle") Boolean isEagle) {}

    /** {@code block_mm_infos} of a body or of its {@code mm_routing_info}, taken only when an array. */
    record MmInfos(
            @JsonProperty("block_mm_infos") @Wire.Lenient List<MmBlock> blockMmInfos) {}

    /** {@code mm_routing_info}'s own {@code block_mm_infos}, which win over the body's. */
    record RoutedMmInfos(
            @JsonProperty("mm_routing_info") @Wire.Lenient MmInfos mmRoutingInfo) {
        List<MmBlock> blocks() {
            return mmRoutingInfo == null ? null : mmRoutingInfo.blockMmInfos;
        }
    }

    /**
     * One block's multimodal objects, taken only when an array; each is checked as the hashes are gathered, block by
     * block, since a stray element is refused in the words of {@code block_mm_infos}.
     */
    record MmBlock(@JsonProperty("mm_objects") @Wire.Lenient List<Object> mmObjects) {}

    /** One multimodal object: its {@code mm_hash}. */
    record MmObject(@JsonProperty("mm_hash") @Wire.Required long mmHash) {}

    /** The hash form of a prompt. */
    record Hashes(
            @JsonProperty("block_hashes") @Wire.Signed long[] blockHashes,
            @JsonProperty("sequence_hashes") @Wire.Signed long[] sequenceHashes,
            @JsonProperty("isl_tokens") Long islTokens) {}

    // ---- reservations ----

    /** {@code POST /reservations}: without a worker, the replay of a pending selection. */
    record Reserve(
            @JsonProperty("selection_id") @Wire.Required String selectionId,
            @JsonProperty("model_name") String modelName,
            @JsonProperty("routing_group") String routingGroup,
            @JsonProperty("worker_id") Long workerId) {
        PartitionKey partition() {
            return new PartitionKey(modelName, routingGroup);
        }
    }

    /** A booking that names its rank: what it books with, read before its prompt. */
    record ExplicitBooking(
            @JsonProperty("dp_rank") int dpRank,

            @JsonProperty("router_config_override") @Wire.Expected("a struct")
            RouterConfig routerConfigOverride,

            @JsonProperty("effective_prefill_tokens") Long effectivePrefillTokens,
            @JsonProperty("track_prefill_tokens") Boolean trackPrefillTokens,

            @JsonProperty("expected_output_tokens") @Wire.U32
            Long expectedOutputTokens) {}

    /** A booking's {@code lora_name}, read after its prompt. */
    record Lora(@JsonProperty("lora_name") String loraName) {}

    /** {@code POST /reservations/{id}/output_block}. */
    record OutputBlock(@JsonProperty("decay_fraction") Double decayFraction) {}

    // ---- the worker catalog ----

    /** What {@code POST /workers} reads before a worker's members. */
    record NewWorker(
            @JsonProperty("worker_id") @Wire.Required long workerId,
            @JsonProperty("model_name") String modelName,
            @JsonProperty("routing_group") String routingGroup) {
        PartitionKey partition() {
            return new PartitionKey(modelName, routingGroup);
        }
    }

    /**
     * A worker's members (docs/api/selection.md#post-workers), each null when absent. Those only stored and echoed
     * stand in the order of {@link WorkerEntry#ECHOED}, between the taints and the typed rest; the
     * KV-hint ones among them are read by selections, so they have the reference's shapes.
     */
    record Worker(
            @JsonProperty("kv_events_endpoints") @Wire.Expected("a map") @Wire.Ranks
            Map<String, String> kvEventsEndpoints,

            @JsonProperty("taints") @Wire.Expected("a sequence")
            List<String> taints,

            @JsonProperty("stable_routing_id") Object stableRoutingId,
            @JsonProperty("topology_domains") Object topologyDomains,
            @JsonProperty("kv_transfer_domain") Object kvTransferDomain,
            @JsonProperty("kv_transfer_enforcement") Object kvTransferEnforcement,
            @JsonProperty("kv_transfer_preferred_weight") Object kvTransferPreferredWeight,
            @JsonProperty("router_hint_worker_type") String routerHintWorkerType,

            @JsonProperty("router_hint_source_control_endpoints")
            @Wire.Expected("a map")
            @Wire.Ranks(maxChars = PeerSet.MAX_URL_CHARS)
            Map<String, String> routerHintSourceControlEndpoints,

            @JsonProperty("kv_event_source_mode") String kvEventSourceMode,
            @JsonProperty("is_eagle") Boolean isEagle,
            @JsonProperty("endpoint") String endpoint,
            @JsonProperty("block_size") @Wire.U32 Long blockSize,

            @JsonProperty("data_parallel_start_rank") @Wire.U32
            Long dataParallelStartRank,

            @JsonProperty("data_parallel_size") @Wire.U32 Long dataParallelSize,
            @JsonProperty("kv_events_endpoint") String kvEventsEndpoint,
            @JsonProperty("replay_endpoint") String replayEndpoint,
            @JsonProperty("max_num_batched_tokens") Long maxNumBatchedTokens,
            @JsonProperty("total_kv_blocks") Long totalKvBlocks) {
        /** The echoed members sent, in {@link WorkerEntry#ECHOED}'s order. */
        Map<String, Object> echoed() {
            Object[] values = {
                stableRoutingId,
                topologyDomains,
                kvTransferDomain,
                kvTransferEnforcement,
                kvTransferPreferredWeight,
                routerHintWorkerType,
                routerHintSourceControlEndpoints,
                kvEventSourceMode
            };
            Map<String, Object> out = new LinkedHashMap<>();
            for (int i = 0; i < values.length; i++) {
                if (values[i] != null) {
                    out.put(WorkerEntry.ECHOED.get(i), values[i]);
                }
            }
            return out;
        }
    }
}
