package dev.kvindexer.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.partition.StreamId;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.registry.Registry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The answer of GET /workers (docs/api/dynamo.md#get-workers), one record per instance. A Mooncake registration with a
 * string id also shows {@code instance_name} (docs/api/mooncake-json.md#string-instance-ids), and one that gave a
 * {@code worker_address} shows it (docs/api/sglang-grpc.md#engines-kvindexer-reads-itself).
 */
final class WorkersJson {
    private WorkersJson() {}

    /** One registered instance: its ranks' endpoints and each rank's listener. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Instance(
            long instanceId,
            String instanceName,
            String source,
            String status,
            String modelName,
            String routingGroup,
            String tenantId,
            int blockSize,
            String workerAddress,
            Map<String, String> endpoints,
            Map<String, RankListener> listeners) {}

    /**
     * One rank's listener. {@code last_error} while the error explains the state (failed, or pending), as Dynamo shows
     * it; once the listener is active again, {@code previous_error}, so a recovered listener does not read as failing.
     * Each with its time ({@code _at}, RFC 3339 UTC). A stream that lost batches for good shows {@code "exact":false}
     * and how many it lost.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record RankListener(
            String endpoint,
            String status,
            String lastError,
            String lastErrorAt,
            String previousError,
            String previousErrorAt,
            Boolean exact,
            Long lostBatches) {}

    /** {@code echoTenant}: also show the group as {@code tenant_id}, for clients of the older group rule. */
    static List<Instance> of(List<Registry.WorkerView> workers, Watermarks watermarks, boolean echoTenant) {
        List<Instance> out = new ArrayList<>(workers.size());
        for (Registry.WorkerView v : workers) {
            List<ListenerState> states = new ArrayList<>();
            Map<String, String> endpoints = new LinkedHashMap<>();
            Map<String, RankListener> listeners = new LinkedHashMap<>();
            for (Listener l : v.listeners()) {
                ListenerState state = l.state();
                states.add(state);
                String rank = Integer.toString(l.dpRank());
                endpoints.put(rank, l.endpoint());
                listeners.put(
                        rank, listener(l, state, watermarks.find(new StreamId(v.key(), l.workerId(), l.dpRank()))));
            }
            String routingGroup = v.key().routingGroup();
            out.add(new Instance(
                    v.workerId(),
                    v.name(),
                    "zmq",
                    ListenerState.aggregate(states).jsonName(),
                    v.key().modelName(),
                    routingGroup,
                    echoTenant ? routingGroup : null,
                    v.blockSize(),
                    v.workerAddress(),
                    endpoints,
                    listeners));
        }
        return out;
    }

    private static RankListener listener(Listener l, ListenerState state, Watermarks.Watermark mark) {
        String current = l.currentError();
        String past = current == null ? l.pastError() : null;
        String at = current != null || past != null
                ? Instant.ofEpochMilli(l.lastErrorAtMillis()).toString()
                : null;
        boolean lossy = mark != null && !mark.exact();
        return new RankListener(
                l.endpoint(),
                state.jsonName(),
                current,
                current != null ? at : null,
                past,
                past != null ? at : null,
                lossy ? Boolean.FALSE : null,
                lossy ? mark.lostBatches() : null);
    }
}
