package dev.kvindexer.http;

import dev.kvindexer.ingest.Listener;
import dev.kvindexer.ingest.ListenerState;
import dev.kvindexer.partition.StreamId;
import dev.kvindexer.partition.Watermarks;
import dev.kvindexer.registry.Registry;
import io.vertx.core.json.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * Renders GET /workers (docs/api/dynamo.md#get-workers); ids are printed unsigned, so this is written by hand. A Mooncake registration with
 * a string id also shows {@code instance_name} (docs/api/mooncake-json.md#string-instance-ids).
 */
final class WorkersJson {
    private WorkersJson() {}

    /**
     * {@code echoTenant}: also show the group as {@code tenant_id}, for clients of the older group rule. A rank whose
     * stream lost batches for good also shows {@code "exact":false} and how many it lost.
     */
    static String render(List<Registry.WorkerView> workers, Watermarks watermarks, boolean echoTenant) {
        StringBuilder sb = new StringBuilder("[");
        for (int w = 0; w < workers.size(); w++) {
            Registry.WorkerView v = workers.get(w);
            List<ListenerState> states = new ArrayList<>();
            StringBuilder endpoints = new StringBuilder("{");
            StringBuilder listeners = new StringBuilder("{");
            for (int i = 0; i < v.listeners().size(); i++) {
                Listener l = v.listeners().get(i);
                ListenerState state = l.state();
                states.add(state);
                String sep = i == 0 ? "" : ",";
                endpoints
                        .append(sep)
                        .append('"')
                        .append(l.dpRank())
                        .append("\":")
                        .append(Json.encode(l.endpoint()));
                listeners
                        .append(sep)
                        .append('"')
                        .append(l.dpRank())
                        .append("\":{\"endpoint\":")
                        .append(Json.encode(l.endpoint()))
                        .append(",\"status\":\"")
                        .append(state.jsonName())
                        .append('"');
                errors(listeners, l);
                Watermarks.Watermark mark = watermarks.find(new StreamId(v.key(), l.workerId(), l.dpRank()));
                if (mark != null && !mark.exact()) {
                    listeners.append(",\"exact\":false,\"lost_batches\":").append(mark.lostBatches());
                }
                listeners.append('}');
            }
            String routingGroup = Json.encode(v.key().routingGroup());
            sb.append(w == 0 ? "" : ",")
                    .append("{\"instance_id\":")
                    .append(Long.toUnsignedString(v.workerId()))
                    .append(v.name() == null ? "" : ",\"instance_name\":" + Json.encode(v.name()))
                    .append(",\"source\":\"zmq\",\"status\":\"")
                    .append(ListenerState.aggregate(states).jsonName())
                    .append("\",\"model_name\":")
                    .append(Json.encode(v.key().modelName()))
                    .append(",\"routing_group\":")
                    .append(routingGroup)
                    .append(echoTenant ? ",\"tenant_id\":" + routingGroup : "")
                    .append(",\"block_size\":")
                    .append(v.blockSize())
                    .append(",\"endpoints\":")
                    .append(endpoints)
                    .append('}')
                    .append(",\"listeners\":")
                    .append(listeners)
                    .append("}}");
        }
        return sb.append(']').toString();
    }

    /**
     * The listener's error: {@code last_error} while it explains the state (failed, or pending), as Dynamo shows it;
     * once the listener is active again, {@code previous_error}, so a recovered listener does not read as failing.
     * Each with its time ({@code _at}, RFC 3339 UTC).
     */
    private static void errors(StringBuilder out, Listener l) {
        String current = l.currentError();
        String past = l.pastError();
        if (current != null || past != null) {
            String member = current != null ? "last_error" : "previous_error";
            out.append(",\"")
                    .append(member)
                    .append("\":")
                    .append(Json.encode(current != null ? current : past))
                    .append(",\"")
                    .append(member)
                    .append("_at\":\"")
                    .append(java.time.Instant.ofEpochMilli(l.lastErrorAtMillis()))
                    .append('"');
        }
    }
}
