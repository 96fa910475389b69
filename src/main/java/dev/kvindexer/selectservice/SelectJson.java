package dev.kvindexer.selectservice;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.select.AffinityTarget;
import dev.kvindexer.select.ConfigOverride;
import dev.kvindexer.select.PartitionInfo;
import dev.kvindexer.select.Prompt;
import dev.kvindexer.select.Roster;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.select.SelectionOptions;
import dev.kvindexer.select.SessionContext;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBinding;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * The selection service's requests read (docs/api/selection.md): each body bound step by step to
 * {@link SelectRequests}' records, in the order the reference reads it, and assembled into what the routes act on;
 * its answers are {@link SelectAnswers}.
 */
final class SelectJson {
    /**
     * A selection request read: where, how, and the prompt normalized for its partition.
     *
     * @param advisory chosen without waiting in the queue, and answered with the rank's load
     *                 (docs/api/selection.md#advisory-selection)
     * @param selectionId {@code selection_id} as the body gave it, for the answer
     * @param reservationId {@code reservation_id} as the body gave it, for the answer (the options carry the key the
     *                      selection is booked under)
     */
    record Selection(
            PartitionKey partition,
            SelectionOptions options,
            Prompt prompt,
            boolean advisory,
            String selectionId,
            String reservationId) {}

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
            JsonObject body,
            Roster roster,
            SelectionConfig config,
            RandomGenerator random,
            boolean reserve,
            boolean sessions) {
        SelectRequests.Select s = JsonBinding.bind(body, SelectRequests.Select.class);
        PartitionKey p = s.partition();
        ConfigOverride override = SelectRequests.RouterConfig.of(s.routerConfigOverride());
        SessionContext session =
                sessions ? JsonBinding.bind(body, SelectRequests.Session.class).session() : null;
        AffinityTarget target =
                JsonBinding.bind(body, SelectRequests.Affinity.class).target();
        SelectionOptions options = optionsOf(s, override, session, target);
        boolean advisory = !reserve
                && Boolean.TRUE.equals(
                        JsonBinding.bind(body, SelectRequests.Advisory.class).advisory());
        PartitionInfo info = roster.requireReady(p);
        return new Selection(
                p,
                options,
                promptOf(body, info, override, config, true, random),
                advisory,
                s.selectionId(),
                s.reservationId());
    }

    /** A {@code /potential_loads} or {@code /overlap_scores} body, read in the same order as a selection's. */
    static Inspection inspection(JsonObject body, Roster roster, SelectionConfig config, RandomGenerator random) {
        SelectRequests.Inspect i = JsonBinding.bind(body, SelectRequests.Inspect.class);
        PartitionKey p = i.partition();
        ConfigOverride override = SelectRequests.RouterConfig.of(i.routerConfigOverride());
        PartitionInfo info = roster.requireReady(p);
        return new Inspection(p, override, info, promptOf(body, info, override, config, true, random));
    }

    /** A worker as POST /workers sends it, {@code worker_id} and partition included. */
    static WorkerEntry worker(JsonObject body) {
        SelectRequests.NewWorker w = JsonBinding.bind(body, SelectRequests.NewWorker.class);
        return worker(body, w.workerId(), w.partition(), null);
    }

    /**
     * The members of a body over a base record (PATCH: present members replace, absent or null keep). A null base
     * reads every member as sent.
     */
    static WorkerEntry worker(JsonObject body, long id, PartitionKey p, WorkerEntry base) {
        SelectRequests.Worker w = JsonBinding.bind(body, SelectRequests.Worker.class);
        Map<String, Object> extras = new LinkedHashMap<>(base == null ? Map.of() : base.extras());
        extras.putAll(w.echoed());
        return new WorkerEntry(
                id,
                p.modelName(),
                p.routingGroup(),
                pick(w.endpoint(), base == null ? null : base.endpoint()),
                pick(w.blockSize(), base == null ? null : base.blockSize()),
                pick(w.dataParallelStartRank(), base == null ? null : base.dpStart()),
                pick(w.dataParallelSize(), base == null ? null : base.dpSize()),
                pick(w.kvEventsEndpoint(), base == null ? null : base.kvEventsEndpoint()),
                pick(w.kvEventsEndpoints(), base == null ? Map.of() : base.kvEventsEndpoints()),
                pick(w.replayEndpoint(), base == null ? null : base.replayEndpoint()),
                pick(w.maxNumBatchedTokens(), base == null ? null : base.maxNumBatchedTokens()),
                pick(w.totalKvBlocks(), base == null ? null : base.totalKvBlocks()),
                pick(w.isEagle(), base == null ? null : base.isEagle()),
                pick(w.taints(), base == null ? List.of() : base.taints()),
                extras,
                null,
                null);
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

    /**
     * The prompt in either form (docs/api/selection.md#prompts). The token form needs the partition's block size and
     * Eagle flag; {@code blocksRequired} is false on the reservation routes, where the hash form needs no block hashes.
     * The routing token ids of {@code mm_routing_info} win over {@code token_ids}, which are then not read.
     */
    static Prompt promptOf(
            JsonObject body,
            PartitionInfo partition,
            ConfigOverride override,
            SelectionConfig config,
            boolean blocksRequired,
            RandomGenerator random) {
        int[] tokens = JsonBinding.bind(body, SelectRequests.Routed.class).tokens();
        boolean routed = tokens != null;
        if (!routed) {
            tokens = JsonBinding.bind(body, SelectRequests.Tokens.class).tokenIds();
        }
        if (tokens != null) {
            SelectRequests.TokenSeed t = JsonBinding.bind(body, SelectRequests.TokenSeed.class);
            long seed = BlockHasher.seedFor(t.loraName(), t.cacheSalt());
            return Prompt.ofTokens(
                    tokens,
                    partition.blockSize(),
                    seed,
                    mmHashes(body, routed),
                    t.isEagle() != null ? t.isEagle() : partition.eagle(),
                    override.assumeKvReuse(config),
                    random);
        }
        SelectRequests.Hashes h = JsonBinding.bind(body, SelectRequests.Hashes.class);
        return Prompt.ofHashes(h.blockHashes(), h.sequenceHashes(), h.islTokens(), blocksRequired);
    }

    /**
     * Per block, the {@code mm_hash} of each multimodal object
     * (docs/protocol/hashing.md#multimodal-identifiers-and-salt-precedence); null entries for plain blocks. A routed
     * prompt's own {@code block_mm_infos} win over the body's, which are then not read.
     */
    private static long[][] mmHashes(JsonObject body, boolean routed) {
        List<SelectRequests.MmBlock> infos = routed
                ? JsonBinding.bind(body, SelectRequests.RoutedMmInfos.class).blocks()
                : null;
        if (infos == null) {
            infos = JsonBinding.bind(body, SelectRequests.MmInfos.class).blockMmInfos();
        }
        if (infos == null) {
            return null;
        }
        long[][] out = new long[infos.size()][];
        for (int i = 0; i < out.length; i++) {
            SelectRequests.MmBlock block = infos.get(i);
            if (block != null && block.mmObjects() != null) {
                List<Object> objects = block.mmObjects();
                long[] hashes = new long[objects.size()];
                for (int k = 0; k < hashes.length; k++) {
                    hashes[k] = mmHash(objects.get(k));
                }
                out[i] = hashes;
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static long mmHash(Object object) {
        if (!(object instanceof Map<?, ?> members)) {
            throw HttpError.shape("`block_mm_infos`: invalid type, expected a struct");
        }
        return JsonBinding.bind(new JsonObject((Map<String, Object>) members), SelectRequests.MmObject.class)
                .mmHash();
    }

    /** {@code allowed_worker_ids}, {@code pinned_worker}, {@code routing_constraints} and the booking extras. */
    private static SelectionOptions optionsOf(
            SelectRequests.Select s, ConfigOverride override, SessionContext session, AffinityTarget target) {
        List<Long> allowed = null;
        if (s.allowedWorkerIds() != null) {
            allowed = new ArrayList<>(s.allowedWorkerIds().length);
            for (long id : s.allowedWorkerIds()) {
                allowed.add(id);
            }
        }
        SelectRequests.Pinned pinned = s.pinnedWorker();
        SelectRequests.Constraints constraints = s.routingConstraints();
        return new SelectionOptions(
                s.bookingId(),
                override,
                s.expectedOutputTokens(),
                allowed,
                pinned == null ? null : pinned.workerId(),
                pinned == null ? null : pinned.dpRank(),
                constraints == null ? List.of() : constraints.requiredTaints(),
                constraints == null ? Map.of() : constraints.preferredTaints(),
                s.loraName(),
                session,
                target);
    }
}
