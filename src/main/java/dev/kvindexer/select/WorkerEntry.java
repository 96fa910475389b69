package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A worker as a caller registered it (docs/api/selection.md#post-workers): every optional member as sent, null when absent, so the catalog
 * echoes it verbatim, with the lifecycle and the reasons it is not schedulable.
 *
 * @param kvEventsEndpoints rank (decimal string) → ZMQ endpoint, in the order sent
 * @param extras            members only stored and echoed, as plain JSON values by name, in the order of
 *                          {@link #ECHOED}
 */
public record WorkerEntry(
        long workerId,
        String modelName,
        String routingGroup,
        String endpoint,
        Long blockSize,
        Long dpStart,
        Long dpSize,
        String kvEventsEndpoint,
        Map<String, String> kvEventsEndpoints,
        String replayEndpoint,
        Long maxNumBatchedTokens,
        Long totalKvBlocks,
        Boolean isEagle,
        List<String> taints,
        Map<String, Object> extras,
        Lifecycle lifecycle,
        List<String> reasons) {
    /** The stored-and-echoed members beside the typed ones, in the record's order. */
    public static final List<String> ECHOED = List.of(
            "stable_routing_id",
            "topology_domains",
            "kv_transfer_domain",
            "kv_transfer_enforcement",
            "kv_transfer_preferred_weight",
            "router_hint_worker_type",
            "router_hint_source_control_endpoints",
            "kv_event_source_mode");

    public WorkerEntry {
        kvEventsEndpoints = kvEventsEndpoints == null ? Map.of() : kvEventsEndpoints;
        taints = taints == null ? List.of() : taints;
        extras = extras == null ? Map.of() : extras;
        reasons = reasons == null ? List.of() : List.copyOf(reasons);
    }

    public PartitionKey partition() {
        return new PartitionKey(modelName, routingGroup);
    }

    public long firstRank() {
        return dpStart == null ? 0 : dpStart;
    }

    public long rankCount() {
        return dpSize == null ? 1 : dpSize;
    }

    public boolean eagle() {
        return isEagle != null && isEagle;
    }

    public boolean hasRank(long rank) {
        return rank >= firstRank() && rank < firstRank() + rankCount();
    }

    /** The ZMQ endpoint of a rank's KV events, or null (docs/api/selection.md#post-workers: the single endpoint serves a one-rank worker). */
    public String eventsEndpoint(long rank) {
        String e = kvEventsEndpoints.get(Long.toString(rank));
        if (e != null && !e.isEmpty()) {
            return e;
        }
        if (kvEventsEndpoints.isEmpty()
                && rankCount() == 1
                && rank == firstRank()
                && kvEventsEndpoint != null
                && !kvEventsEndpoint.isEmpty()) {
            return kvEventsEndpoint;
        }
        return null;
    }

    /**
     * This record's ranks whose listener cannot stay when {@code next} replaces it in the same partition: those
     * outside the new range, and those whose events or replay endpoint changes.
     */
    public List<Long> ranksReplacedBy(WorkerEntry next) {
        boolean sameReplay = Objects.equals(replayEndpoint, next.replayEndpoint);
        List<Long> out = new ArrayList<>();
        for (long r = firstRank(); r < firstRank() + rankCount(); r++) {
            if (!next.hasRank(r) || !sameReplay || !Objects.equals(eventsEndpoint(r), next.eventsEndpoint(r))) {
                out.add(r);
            }
        }
        return out;
    }

    /** The backend role KV hints pair a target with its sources by; null when the worker takes no hints. */
    public String hintWorkerType() {
        return extras.get("router_hint_worker_type") instanceof String t && !t.isEmpty() ? t : null;
    }

    /**
     * The control endpoints a hint target fetches this worker's blocks from, by global rank (decimal string, as sent);
     * empty when it serves none.
     */
    @SuppressWarnings("unchecked")
    public Map<String, String> hintControlEndpoints() {
        return extras.get("router_hint_source_control_endpoints") instanceof Map<?, ?> m
                ? (Map<String, String>) m
                : Map.of();
    }

    /** The control endpoint of one rank, or null when that rank serves no fetches. */
    public String hintControlEndpoint(long rank) {
        for (Map.Entry<String, String> e : hintControlEndpoints().entrySet()) {
            if (Long.parseUnsignedLong(e.getKey()) == rank && !e.getValue().isEmpty()) {
                return e.getValue();
            }
        }
        return null;
    }

    /** A worker whose blocks a state agent reports: it takes KV hints but its blocks are never fetched by hint. */
    public boolean stateAgentSource() {
        return "state_agent_v2".equals(extras.get("kv_event_source_mode"));
    }

    public WorkerEntry with(Lifecycle lifecycle, List<String> reasons) {
        return new WorkerEntry(
                workerId,
                modelName,
                routingGroup,
                endpoint,
                blockSize,
                dpStart,
                dpSize,
                kvEventsEndpoint,
                kvEventsEndpoints,
                replayEndpoint,
                maxNumBatchedTokens,
                totalKvBlocks,
                isEagle,
                taints,
                extras,
                lifecycle,
                reasons);
    }

    /**
     * Why the worker cannot be scheduled before anything is registered, in the reference's order and words; empty
     * when nothing stands in the way.
     */
    public List<String> staticReasons(boolean queueing, boolean kvEvents) {
        List<String> out = new ArrayList<>();
        if (endpoint == null || endpoint.isEmpty()) {
            out.add("endpoint is required");
        }
        if (blockSize == null || blockSize == 0) {
            out.add("block_size must be greater than 0");
        }
        if (rankCount() == 0) {
            out.add("data_parallel_size must be greater than 0");
        }
        if (queueing && maxNumBatchedTokens == null) {
            out.add("max_num_batched_tokens is required while queueing is enabled");
        }
        if (kvEvents) {
            for (long r = firstRank(); r < firstRank() + rankCount(); r++) {
                if (eventsEndpoint(r) == null) {
                    out.add("kv_events endpoint is required for dp_rank " + r);
                }
            }
        }
        if (replayEndpoint != null && rankCount() > 1) {
            out.add("replay_endpoint is supported only for data_parallel_size 1");
        }
        return out;
    }
}
