package dev.kvindexer.selectservice;

import dev.kvindexer.select.AffinityTarget;
import dev.kvindexer.select.SessionContext;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonRequest;
import io.vertx.core.json.JsonObject;

/**
 * A selection's session members (docs/api/selection.md#session-affinity), in Dynamo's shapes: {@code session_id},
 * the {@code session_context} object that wins over it, and {@code affinity_target}. A wrong shape is a 422 in serde's
 * words, as for every other member.
 */
final class SessionJson {
    private SessionJson() {}

    /** The request's session: {@code session_context} when present, else the flat {@code session_id}; or null. */
    static SessionContext session(JsonRequest body) {
        String flat = body.optionalString("session_id");
        Object context = body.body().getValue("session_context");
        if (context == null) {
            return flat == null ? null : SessionContext.of(flat);
        }
        if (!(context instanceof JsonObject o)) {
            throw HttpError.shape("`session_context`: invalid type, expected struct SelectionSessionContext");
        }
        JsonRequest c = JsonRequest.of(o);
        String sessionId = c.requiredString("session_id");
        String parent = c.optionalString("parent_session_id");
        Boolean last = SelectJson.bool(c, "session_final");
        String trigger = c.optionalString("input_trigger");
        SessionContext.InputTrigger t = trigger == null ? null : SessionContext.InputTrigger.of(trigger);
        if (trigger != null && t == null) {
            throw HttpError.shape("`session_context.input_trigger`: unknown variant `" + trigger
                    + "`, expected one of `user_message`, `tool_result`, `other`");
        }
        return new SessionContext(sessionId, parent, last, t);
    }

    /** {@code affinity_target}: {@code {"worker_id": u64, "dp_rank": u32 | null}}, or null. */
    static AffinityTarget affinityTarget(JsonRequest body) {
        Object v = body.body().getValue("affinity_target");
        if (v == null) {
            return null;
        }
        if (!(v instanceof JsonObject o)) {
            throw HttpError.shape("`affinity_target`: invalid type, expected struct WorkerAffinityTarget");
        }
        JsonRequest t = JsonRequest.of(o);
        return new AffinityTarget(t.requiredU64("worker_id"), t.optionalRank("dp_rank"));
    }
}
