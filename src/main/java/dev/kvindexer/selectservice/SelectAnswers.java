package dev.kvindexer.selectservice;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.select.Booking;
import dev.kvindexer.select.Choice;
import dev.kvindexer.select.LoadSignals;
import dev.kvindexer.select.LoadViews;
import dev.kvindexer.select.WorkerEntry;
import dev.kvindexer.web.Wire;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The selection service's answers in the reference's shapes (docs/api/selection.md), written by
 * {@link dev.kvindexer.web.JsonBinding#encode}: each record's components are its members in order. Ids and
 * {@code worker_load}'s capacities are written unsigned; token and block counts are {@link Wire.Signed}, so a count
 * gone past 2^63 shows as the negative it is held as rather than as a plausible u64. A member the reference leaves
 * out when unknown is {@code NON_NULL}; every other null is written as {@code null}.
 */
final class SelectAnswers {
    private SelectAnswers() {}

    private static final SharedCache NO_SHARED_CACHE = new SharedCache(false, 0, List.of(), null);

    /**
     * A catalog record (docs/api/selection.md#post-workers). The echoed members hold what the worker sent, as sent:
     * their integers are written signed, as the body held them. {@code max_num_batched_tokens} and
     * {@code total_kv_blocks} are u64s, read and written as such.
     */
    record Worker(
            long workerId,
            String modelName,
            String routingGroup,
            String lifecycle,
            String endpoint,
            String kvEventsEndpoint,
            @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, String> kvEventsEndpoints,
            String replayEndpoint,
            Long blockSize,
            Long dataParallelStartRank,
            Long dataParallelSize,
            Long maxNumBatchedTokens,
            Long totalKvBlocks,
            @Wire.Signed Object stableRoutingId,
            @JsonProperty("is_eagle") Boolean isEagle,
            List<String> taints,
            @Wire.Signed Object topologyDomains,
            @Wire.Signed Object kvTransferDomain,
            @Wire.Signed Object kvTransferEnforcement,
            @Wire.Signed Object kvTransferPreferredWeight,
            @JsonInclude(JsonInclude.Include.NON_NULL) Object routerHintWorkerType,
            @JsonInclude(JsonInclude.Include.NON_NULL) Object routerHintSourceControlEndpoints,
            @JsonInclude(JsonInclude.Include.NON_NULL) Object kvEventSourceMode,
            @JsonInclude(JsonInclude.Include.NON_NULL) List<String> notSchedulableReasons) {}

    /** {@code GET /ready}: whether any worker is schedulable, and the whole catalog. */
    record Ready(boolean ready, int schedulableWorkers, List<Worker> workers) {}

    /**
     * A selection (docs/api/selection.md#post-select). Unknown load signals are left out, and so are the booking's
     * members on a selection that books nothing; {@code kv_hint}, when a booking has one, closes the answer.
     */
    record Chosen(
            @JsonInclude(JsonInclude.Include.NON_NULL) String selectionId,
            @JsonInclude(JsonInclude.Include.NON_NULL) String reservationId,
            String modelName,
            String routingGroup,
            long workerId,
            int dpRank,
            String endpoint,
            int blockSize,
            Overlap overlap,
            @Wire.Signed long effectivePrefillTokens,
            @Wire.Signed long potentialDecodeBlocks,
            @JsonInclude(JsonInclude.Include.NON_NULL) Boolean decodeBusy,
            @JsonInclude(JsonInclude.Include.NON_NULL) WorkerLoad workerLoad,

            @JsonInclude(JsonInclude.Include.NON_NULL) @Wire.Signed
            long[] sequenceHashes,

            @JsonInclude(JsonInclude.Include.NON_NULL) @Wire.Signed
            Long islTokens,

            @JsonInclude(JsonInclude.Include.NON_NULL) Boolean trackPrefillTokens,
            @JsonInclude(JsonInclude.Include.NON_NULL) KvHint kvHint) {
        /** The same booking with its hint. */
        Chosen withHint(KvHint hint) {
            return with(selectionId, reservationId, hint);
        }

        /**
         * The answer to a body that named its booking by {@code reservation_id}: both ids as that body gave them, as
         * Dynamo's earlier selection service echoed them.
         */
        Chosen withIds(String givenSelectionId, String givenReservationId) {
            return givenReservationId == null ? this : with(givenSelectionId, givenReservationId, kvHint);
        }

        private Chosen with(String selection, String reservation, KvHint hint) {
            return new Chosen(
                    selection,
                    reservation,
                    modelName,
                    routingGroup,
                    workerId,
                    dpRank,
                    endpoint,
                    blockSize,
                    overlap,
                    effectivePrefillTokens,
                    potentialDecodeBlocks,
                    decodeBusy,
                    workerLoad,
                    sequenceHashes,
                    islTokens,
                    trackPrefillTokens,
                    hint);
        }
    }

    /** The chosen worker's overlap in tokens; {@code dp} by rank. */
    record Overlap(
            @Wire.Signed long longestMatched,
            @Wire.Signed long gpu,
            @Wire.Signed Map<String, Long> dp,
            @Wire.Signed long cpu,
            @Wire.Signed long disk) {}

    /** An advisory selection's rank load (docs/api/selection.md#load-signals). */
    record WorkerLoad(
            @Wire.Signed long activePrefillTokens,
            long prefillTokenCapacity,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long totalKvBlocks,
            @JsonInclude(JsonInclude.Include.NON_NULL) Boolean prefillBusy) {}

    /** A booking's {@code kv_hint} (docs/api/selection.md#kv-hints), with its one action. */
    record KvHint(String protocolVersion, String messageId, List<Action> actions) {}

    record Action(String actionId, String actionType, String actionVersion, FetchPayload payload) {}

    /** {@code block_hashes}: engine hashes, u64s as engines write them. */
    record FetchPayload(List<Long> blockHashes, String sourceControlEndpoint) {}

    /** A booking by {@code POST /reservations} (docs/api/selection.md#post-reservations). */
    record Booked(
            String selectionId, String modelName, String routingGroup, long workerId, int dpRank, String endpoint) {}

    /** One rank's load row of {@code /loads} and {@code /potential_loads}. */
    record LoadRow(
            long workerId,
            int dpRank,
            @Wire.Signed long potentialPrefillTokens,
            @Wire.Signed long potentialDecodeBlocks,
            int activeRequests) {}

    /** One partition of {@code GET /loads}, with what waits in its queue. */
    record PartitionLoads(
            String modelName,
            String routingGroup,
            List<LoadRow> loads,
            int pendingCount,
            @Wire.Signed long pendingIslTokens) {}

    /** {@code /overlap_scores}: each rank's reach of the prompt in blocks. */
    record Scores(int blockSize, int numBlocks, List<ScoreRow> workers, SharedCache sharedCache) {}

    /**
     * One rank's scores; {@code shared_beyond_device_blocks} is always null (no shared cache), and
     * {@code predicted_blocks} is shown only while predicted entries are on.
     */
    record ScoreRow(
            long workerId,
            int dpRank,
            int deviceBlocks,
            int hostPinnedBlocks,
            int diskBlocks,
            int hostPinnedExtensionBlocks,
            int diskExtensionBlocks,
            Integer sharedBeyondDeviceBlocks,
            double routerCreditBlocks,
            @JsonInclude(JsonInclude.Include.NON_NULL) Integer predictedBlocks) {}

    /** The reference's shared cache, which this service does not have. */
    record SharedCache(boolean enabled, int totalHitBlocks, List<Object> ranges, String error) {}

    static Worker worker(WorkerEntry w) {
        Map<String, Object> x = w.extras();
        return new Worker(
                w.workerId(),
                w.modelName(),
                w.routingGroup(),
                w.lifecycle().wire(),
                w.endpoint(),
                w.kvEventsEndpoint(),
                w.kvEventsEndpoints().isEmpty() ? null : w.kvEventsEndpoints(),
                w.replayEndpoint(),
                w.blockSize(),
                w.dpStart(),
                w.dpSize(),
                w.maxNumBatchedTokens(),
                w.totalKvBlocks(),
                x.get("stable_routing_id"),
                w.isEagle(),
                w.taints(),
                x.getOrDefault("topology_domains", Map.of()),
                x.get("kv_transfer_domain"),
                x.get("kv_transfer_enforcement"),
                x.get("kv_transfer_preferred_weight"),
                x.get("router_hint_worker_type"),
                x.get("router_hint_source_control_endpoints"),
                x.get("kv_event_source_mode"),
                w.reasons().isEmpty() ? null : w.reasons());
    }

    static List<Worker> workers(List<WorkerEntry> entries) {
        List<Worker> out = new ArrayList<>(entries.size());
        for (WorkerEntry w : entries) {
            out.add(worker(w));
        }
        return out;
    }

    /** {@code booking}: a {@code /select_and_reserve} answer, which adds the prompt it booked. */
    static Chosen choice(Choice c, boolean booking, LoadSignals signals) {
        Choice.Overlap ov = c.overlap();
        Map<String, Long> dp = new LinkedHashMap<>();
        for (int i = 0; i < ov.dpRanks().length; i++) {
            dp.put(Long.toString(ov.dpRanks()[i]), ov.dpTokens()[i]);
        }
        LoadSignals.WorkerLoad load = signals.workerLoad();
        return new Chosen(
                c.selectionId(),
                null,
                c.partition().modelName(),
                c.partition().routingGroup(),
                c.worker().workerId(),
                c.dpRank(),
                c.worker().endpoint(),
                c.blockSize(),
                new Overlap(ov.longestMatched(), ov.gpu(), dp, ov.cpu(), ov.disk()),
                c.effectivePrefill(),
                c.potentialDecodeBlocks(),
                signals.decodeBusy(),
                load == null
                        ? null
                        : new WorkerLoad(
                                load.activePrefillTokens(),
                                load.prefillTokenCapacity(),
                                load.totalKvBlocks(),
                                load.prefillBusy()),
                booking ? c.prompt().sequenceHashes() : null,
                booking ? c.prompt().isl() : null,
                booking ? c.trackPrefill() : null,
                null);
    }

    /**
     * A booking's {@code kv_hint}: one {@code kv.fetch} action naming where the chosen rank can fetch the source's
     * blocks and their engine hashes from the prompt's first block.
     */
    static KvHint kvHint(String selectionId, String controlEndpoint, long[] engineHashes) {
        List<Long> hashes = new ArrayList<>(engineHashes.length);
        for (long h : engineHashes) {
            hashes.add(h);
        }
        return new KvHint(
                "0.1",
                selectionId,
                List.of(new Action("a1", "kv.fetch", "1.0", new FetchPayload(hashes, controlEndpoint))));
    }

    static Booked booking(Booking b) {
        return new Booked(
                b.selectionId(),
                b.partition().modelName(),
                b.partition().routingGroup(),
                b.worker().workerId(),
                b.dpRank(),
                b.worker().endpoint());
    }

    static List<LoadRow> loadRows(List<LoadViews.LoadRow> rows) {
        List<LoadRow> out = new ArrayList<>(rows.size());
        for (LoadViews.LoadRow r : rows) {
            out.add(new LoadRow(r.workerId(), r.dpRank(), r.prefillTokens(), r.decodeBlocks(), r.requests()));
        }
        return out;
    }

    static PartitionLoads partitionLoads(
            PartitionKey p, List<LoadViews.LoadRow> rows, int pendingCount, long pendingIslTokens) {
        return new PartitionLoads(p.modelName(), p.routingGroup(), loadRows(rows), pendingCount, pendingIslTokens);
    }

    /** {@code predicted}: whether predicted entries are on, and each row shows its own {@code predicted_blocks}. */
    static Scores scores(int blockSize, int blocks, List<LoadViews.ScoreRow> rows, boolean predicted) {
        List<ScoreRow> workers = new ArrayList<>(rows.size());
        for (LoadViews.ScoreRow r : rows) {
            workers.add(new ScoreRow(
                    r.workerId(),
                    r.dpRank(),
                    r.dev(),
                    r.dev() + r.host(),
                    r.dev() + r.host() + r.disk(),
                    r.host(),
                    r.disk(),
                    null,
                    r.creditBlocks(),
                    predicted ? r.predicted() : null));
        }
        return new Scores(blockSize, blocks, workers, NO_SHARED_CACHE);
    }
}
