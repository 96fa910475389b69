package dev.kvindexer.selectservice;

import dev.kvindexer.cluster.PeerSet;
import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.select.ConfigOverride;
import dev.kvindexer.select.PartitionInfo;
import dev.kvindexer.select.Prompt;
import dev.kvindexer.select.Roster;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SelectionOptions;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/** The selection service's request members read, in the reference's shapes (docs/api/selection.md); its answers are {@link SelectAnswers}. */
final class SelectJson {
    /**
     * A selection request read: where, how, and the prompt normalized for its partition.
     *
     * @param advisory chosen without waiting in the queue, and answered with the rank's load
     *                 (docs/api/selection.md#advisory-selection)
     */
    record Selection(PartitionKey partition, SelectionOptions options, Prompt prompt, boolean advisory) {}

    /** An inspection request read: the overrides it scores with and the prompt normalized for its partition. */
    record Inspection(PartitionKey partition, ConfigOverride override, PartitionInfo info, Prompt prompt) {}

    private SelectJson() {}

    // ---- requests ----

    /**
     * A {@code /select} or, with {@code reserve}, {@code /select_and_reserve} body. The token form of the prompt needs
     * its partition's block size, so a partition that is not ready is refused before the prompt is read. A booking is
     * never advisory: there {@code advisory} is an unknown member, not even type-checked. Without session affinity
     * the session members are unknown members too.
     */
    static Selection selection(
            JsonRequest body,
            Roster roster,
            SelectionConfig config,
            RandomGenerator random,
            boolean reserve,
            boolean sessions) {
        PartitionKey p = partition(body);
        ConfigOverride override = override(body);
        SelectionOptions options = optionsOf(body, override, sessions);
        boolean advisory = !reserve && Boolean.TRUE.equals(bool(body, "advisory"));
        PartitionInfo info = roster.requireReady(p);
        return new Selection(p, options, promptOf(body, info, override, config, true, random), advisory);
    }

    /** A {@code /potential_loads} or {@code /overlap_scores} body, read in the same order as a selection's. */
    static Inspection inspection(JsonRequest body, Roster roster, SelectionConfig config, RandomGenerator random) {
        PartitionKey p = partition(body);
        ConfigOverride override = override(body);
        PartitionInfo info = roster.requireReady(p);
        return new Inspection(p, override, info, promptOf(body, info, override, config, true, random));
    }

    static PartitionKey partition(JsonRequest body) {
        return new PartitionKey(body.optionalString("model_name"), body.optionalString("routing_group"));
    }

    /** A worker as POST /workers sends it; {@code workerId} from the body. */
    static WorkerEntry worker(JsonRequest body) {
        long id = body.requiredU64("worker_id");
        return worker(body, id, partition(body), null);
    }

    /**
     * The members of a body over a base record (PATCH: present members replace, absent or null keep). A null base
     * reads every member as sent.
     */
    static WorkerEntry worker(JsonRequest body, long id, PartitionKey p, WorkerEntry base) {
        Map<String, String> endpoints = base == null ? Map.of() : base.kvEventsEndpoints();
        if (body.body().getValue("kv_events_endpoints") != null) {
            endpoints = byRank("kv_events_endpoints", body.body().getValue("kv_events_endpoints"), Integer.MAX_VALUE);
        }
        List<String> taints = base == null ? List.of() : base.taints();
        if (body.body().getValue("taints") != null) {
            Object v = body.body().getValue("taints");
            if (!(v instanceof JsonArray a)) {
                throw HttpError.shape("`taints`: invalid type, expected a sequence");
            }
            List<String> t = new ArrayList<>();
            for (Object x : a) {
                if (!(x instanceof String s)) {
                    throw HttpError.shape("`taints`: invalid type, expected a string");
                }
                t.add(s);
            }
            taints = t;
        }
        Map<String, Object> extras = new LinkedHashMap<>(base == null ? Map.of() : base.extras());
        for (String name : WorkerEntry.ECHOED) {
            Object v = body.body().getValue(name);
            if (v != null) {
                extras.put(name, echoed(name, v));
            }
        }
        Boolean eagle = body.body().getValue("is_eagle") != null
                ? bool(body, "is_eagle")
                : base == null ? null : base.isEagle();
        return new WorkerEntry(
                id,
                p.modelName(),
                p.routingGroup(),
                pick(body.optionalString("endpoint"), base == null ? null : base.endpoint()),
                pick(optionalU32(body, "block_size"), base == null ? null : base.blockSize()),
                pick(optionalU32(body, "data_parallel_start_rank"), base == null ? null : base.dpStart()),
                pick(optionalU32(body, "data_parallel_size"), base == null ? null : base.dpSize()),
                pick(body.optionalString("kv_events_endpoint"), base == null ? null : base.kvEventsEndpoint()),
                endpoints,
                pick(body.optionalString("replay_endpoint"), base == null ? null : base.replayEndpoint()),
                pick(optionalU64(body, "max_num_batched_tokens"), base == null ? null : base.maxNumBatchedTokens()),
                pick(optionalU64(body, "total_kv_blocks"), base == null ? null : base.totalKvBlocks()),
                eagle,
                taints,
                extras,
                null,
                null);
    }

    /**
     * A member stored and echoed as sent. The KV-hint members are read by selections, so their shapes are the
     * reference's: the worker type and source mode strings, the control endpoints a map of rank to string.
     */
    private static Object echoed(String name, Object v) {
        return switch (name) {
            case "router_hint_worker_type", "kv_event_source_mode" -> {
                if (!(v instanceof String)) {
                    throw HttpError.shape("`" + name + "`: invalid type, expected a string");
                }
                yield v;
            }
            case "router_hint_source_control_endpoints" -> byRank(name, v, PeerSet.MAX_URL_CHARS);
            default -> v instanceof JsonObject o ? o.getMap() : v instanceof JsonArray a ? a.getList() : v;
        };
    }

    /** A map of rank (u32 as a decimal string) to string, in the order sent, each string at most {@code maxChars}. */
    private static Map<String, String> byRank(String field, Object v, int maxChars) {
        if (!(v instanceof JsonObject o)) {
            throw HttpError.shape("`" + field + "`: invalid type, expected a map");
        }
        LinkedHashMap<String, String> m = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : o) {
            if (!(e.getValue() instanceof String s)) {
                throw HttpError.shape("`" + field + "." + e.getKey() + "`: invalid type, expected a string");
            }
            if (s.length() > maxChars) {
                throw HttpError.shape("`" + field + "." + e.getKey() + "`: longer than " + maxChars + " characters");
            }
            try {
                if (Long.parseUnsignedLong(e.getKey()) > 0xFFFF_FFFFL) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException ex) {
                throw HttpError.shape("`" + field + "`: invalid rank `" + e.getKey() + "`, expected u32");
            }
            m.put(e.getKey(), s);
        }
        return m;
    }

    /**
     * Refuses a rank range the service cannot hold, before anything is built for it: more ranks than
     * {@code maxRanks} (each is a listener and a scheduler row), a rank past what the index stores, or more control
     * endpoints than ranks.
     */
    static WorkerEntry checkRanks(WorkerEntry w, int maxRanks) {
        if (w.rankCount() > maxRanks) {
            throw HttpError.shape("`data_parallel_size`: " + w.rankCount() + " is over the limit of " + maxRanks
                    + " ranks per worker (--max-worker-ranks)");
        }
        long last = w.firstRank() + Math.max(w.rankCount(), 1) - 1;
        if (last > EventBatch.MAX_RANK) {
            throw HttpError.shape("`data_parallel_start_rank`: dp_rank " + last + " is over " + EventBatch.MAX_RANK
                    + ", the largest rank the index holds");
        }
        // A worker of no ranks is only incomplete; refusing its endpoints would refuse the patch that takes it out.
        int endpoints = w.hintControlEndpoints().size();
        if (endpoints > Math.max(w.rankCount(), 1)) {
            throw HttpError.shape("`router_hint_source_control_endpoints`: " + endpoints + " entries for "
                    + w.rankCount() + " ranks, at most one per rank");
        }
        return w;
    }

    private static <T> T pick(T sent, T kept) {
        return sent != null ? sent : kept;
    }

    static Long optionalU32(JsonRequest body, String field) {
        if (body.body().getValue(field) == null) {
            return null;
        }
        long v = body.requiredU64(field);
        if (v < 0 || v > 0xFFFF_FFFFL) {
            throw HttpError.shape("`" + field + "`: invalid value " + Long.toUnsignedString(v) + ", expected u32");
        }
        return v;
    }

    static Long optionalU64(JsonRequest body, String field) {
        return body.body().getValue(field) == null ? null : body.requiredU64(field);
    }

    static Boolean bool(JsonRequest body, String field) {
        Object v = body.body().getValue(field);
        if (v == null) {
            return null;
        }
        if (!(v instanceof Boolean b)) {
            throw HttpError.shape("`" + field + "`: invalid type, expected a boolean");
        }
        return b;
    }

    static Double number(JsonObject o, String field) {
        Object v = o.getValue(field);
        if (v == null) {
            return null;
        }
        if (!(v instanceof Number n)) {
            throw HttpError.shape("`" + field + "`: invalid type, expected f64");
        }
        return n.doubleValue();
    }

    /** {@code router_config_override}; a value out of range is a 422 like any other shape error. */
    static ConfigOverride override(JsonRequest body) {
        Object v = body.body().getValue("router_config_override");
        if (v == null) {
            return ConfigOverride.NONE;
        }
        if (!(v instanceof JsonObject o)) {
            throw HttpError.shape("`router_config_override`: invalid type, expected a struct");
        }
        try {
            JsonRequest r = JsonRequest.of(o);
            return new ConfigOverride(
                    number(o, "overlap_score_credit"),
                    number(o, "prefill_load_scale"),
                    number(o, "overlap_score_weight"),
                    number(o, "router_temperature"),
                    bool(r, "assume_kv_reuse"),
                    bool(r, "track_prefill_tokens"),
                    number(o, "shared_cache_multiplier"));
        } catch (IllegalArgumentException e) {
            throw HttpError.shape("router_config_override: " + e.getMessage());
        }
    }

    /**
     * The prompt in either form (docs/api/selection.md#prompts). The token form needs the partition's block size and Eagle flag;
     * {@code blocksRequired} is false on the reservation routes, where the hash form needs no block hashes.
     */
    static Prompt promptOf(
            JsonRequest body,
            PartitionInfo partition,
            ConfigOverride override,
            SelectionConfig config,
            boolean blocksRequired,
            RandomGenerator random) {
        int[] tokens = null;
        JsonArray mmInfos = body.body().getValue("block_mm_infos") instanceof JsonArray a ? a : null;
        Object routing = body.body().getValue("mm_routing_info");
        if (routing instanceof JsonObject r
                && r.getValue("routing_token_ids") instanceof JsonArray ids
                && !ids.isEmpty()) {
            tokens = JsonRequest.of(r).u32Array("routing_token_ids");
            if (r.getValue("block_mm_infos") instanceof JsonArray infos) {
                mmInfos = infos;
            }
        } else if (body.has("token_ids") && body.body().getValue("token_ids") != null) {
            tokens = body.u32Array("token_ids");
        }
        if (tokens != null) {
            long seed = BlockHasher.seedFor(body.optionalString("lora_name"), body.optionalString("cache_salt"));
            Boolean eagle = bool(body, "is_eagle");
            return Prompt.ofTokens(
                    tokens,
                    partition.blockSize(),
                    seed,
                    mmHashes(mmInfos),
                    eagle != null ? eagle : partition.eagle(),
                    override.assumeKvReuse(config),
                    random);
        }
        long[] blocks = body.body().getValue("block_hashes") == null ? null : body.i64Array("block_hashes");
        long[] sequence = body.body().getValue("sequence_hashes") == null ? null : body.i64Array("sequence_hashes");
        return Prompt.ofHashes(blocks, sequence, optionalU64(body, "isl_tokens"), blocksRequired);
    }

    /**
     * Per block, the {@code mm_hash} of each multimodal object
     * (docs/protocol/hashing.md#multimodal-identifiers-and-salt-precedence); null entries for plain blocks.
     */
    private static long[][] mmHashes(JsonArray infos) {
        if (infos == null) {
            return null;
        }
        long[][] out = new long[infos.size()][];
        for (int i = 0; i < out.length; i++) {
            if (infos.getValue(i) instanceof JsonObject block
                    && block.getValue("mm_objects") instanceof JsonArray objs) {
                long[] hashes = new long[objs.size()];
                for (int k = 0; k < hashes.length; k++) {
                    if (!(objs.getValue(k) instanceof JsonObject obj)) {
                        throw HttpError.shape("`block_mm_infos`: invalid type, expected a struct");
                    }
                    hashes[k] = JsonRequest.of(obj).requiredU64("mm_hash");
                }
                out[i] = hashes;
            }
        }
        return out;
    }

    /** {@code allowed_worker_ids}, {@code pinned_worker}, {@code routing_constraints} and the booking extras. */
    static SelectionOptions optionsOf(JsonRequest body, ConfigOverride override, boolean sessions) {
        List<Long> allowed = allowedWorkers(body);
        Long pinnedWorker = null;
        Integer pinnedRank = null;
        Object pinned = body.body().getValue("pinned_worker");
        if (pinned != null) {
            if (!(pinned instanceof JsonObject o)) {
                throw HttpError.shape("`pinned_worker`: invalid type, expected a struct");
            }
            JsonRequest r = JsonRequest.of(o);
            pinnedWorker = r.requiredU64("worker_id");
            pinnedRank = r.optionalU32("dp_rank", 0);
        }
        List<String> required = List.of();
        Map<String, Double> preferred = Map.of();
        Object constraints = body.body().getValue("routing_constraints");
        if (constraints != null) {
            if (!(constraints instanceof JsonObject c)) {
                throw HttpError.shape("`routing_constraints`: invalid type, expected a struct");
            }
            required = requiredTaints(c);
            preferred = preferredTaints(c);
        }
        Long expected = optionalU32(body, "expected_output_tokens");
        return new SelectionOptions(
                body.optionalString("selection_id"),
                override,
                expected,
                allowed,
                pinnedWorker,
                pinnedRank,
                required,
                preferred,
                body.optionalString("lora_name"),
                sessions ? SessionJson.session(body) : null,
                SessionJson.affinityTarget(body));
    }

    /** {@code allowed_worker_ids}, or null without it. */
    private static List<Long> allowedWorkers(JsonRequest body) {
        if (body.body().getValue("allowed_worker_ids") == null) {
            return null;
        }
        List<Long> allowed = new ArrayList<>();
        for (long id : body.hashArray("allowed_worker_ids")) {
            allowed.add(id);
        }
        return allowed;
    }

    /** {@code routing_constraints.required_taints}; none when it is not an array. */
    private static List<String> requiredTaints(JsonObject constraints) {
        if (!(constraints.getValue("required_taints") instanceof JsonArray req)) {
            return List.of();
        }
        List<String> t = new ArrayList<>();
        for (Object x : req) {
            if (!(x instanceof String s)) {
                throw HttpError.shape("`required_taints`: invalid type, expected a string");
            }
            t.add(s);
        }
        return t;
    }

    /** {@code routing_constraints.preferred_taints} in the body's order; none when it is not an object. */
    private static Map<String, Double> preferredTaints(JsonObject constraints) {
        if (!(constraints.getValue("preferred_taints") instanceof JsonObject pref)) {
            return Map.of();
        }
        Map<String, Double> m = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : pref) {
            if (!(e.getValue() instanceof Number n)) {
                throw HttpError.shape("`preferred_taints." + e.getKey() + "`: invalid type, expected f32");
            }
            m.put(e.getKey(), n.doubleValue());
        }
        return m;
    }
}
