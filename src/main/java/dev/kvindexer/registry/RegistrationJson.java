package dev.kvindexer.registry;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.ingest.Publisher;
import dev.kvindexer.zmq.ZmqEndpoint;
import io.vertx.core.json.JsonObject;

/**
 * A registration as a JSON object, field by field in a fixed order: the form the cluster's map stores (and signs) and
 * a node's data directory keeps. Reading one back accepts only what {@code /register} would have accepted.
 */
public final class RegistrationJson {
    private RegistrationJson() {}

    /** A stored registration that {@code /register} would not have accepted. */
    public static final class Invalid extends Exception {
        Invalid(String message) {
            super(message, null, false, false);
        }
    }

    public static JsonObject encode(RegisterRequest r) {
        return new JsonObject()
                .put("instance_id", Long.toUnsignedString(r.workerId()))
                .put("dp_rank", r.dpRank())
                .put("endpoint", r.endpoint())
                .put("replay_endpoint", r.replayEndpoint())
                .put("model_name", r.partition().modelName())
                .put("tenant_id", r.partition().routingGroup())
                .put("block_size", r.blockSize())
                .put("instance_name", r.publisher().name())
                .put("type", r.publisher().type())
                .put("lora_name", r.publisher().defaultLora())
                .put("additional_salt", r.publisher().additionalSalt())
                .put("worker_address", r.publisher().workerAddress());
    }

    public static RegisterRequest decode(JsonObject o) throws Invalid {
        String id = string(o, "instance_id", false);
        if (!InstanceIds.isCanonicalDecimal(id)) {
            throw new Invalid("instance_id must be an unsigned decimal");
        }
        long workerId = Long.parseUnsignedLong(id);
        int dpRank = (int) nonNegative(o, "dp_rank", Integer.MAX_VALUE);
        String endpoint = endpoint(string(o, "endpoint", false), "endpoint");
        String replay = o.getValue("replay_endpoint") == null
                ? null
                : endpoint(string(o, "replay_endpoint", false), "replay_endpoint");
        int blockSize = (int) nonNegative(o, "block_size", Integer.MAX_VALUE);
        if (blockSize == 0) {
            throw new Invalid("block_size must be positive");
        }
        String name = string(o, "instance_name", true);
        if (name != null && (InstanceIds.isCanonicalDecimal(name) || InstanceIds.of(name) != workerId)) {
            throw new Invalid("instance_name does not name the instance id");
        }
        String type = string(o, "type", true);
        if (type != null && !type.equals(Publisher.canonicalType(type))) {
            throw new Invalid("unknown publisher type");
        }
        return new RegisterRequest(
                workerId,
                dpRank,
                endpoint,
                replay,
                new PartitionKey(string(o, "model_name", false), string(o, "tenant_id", false)),
                blockSize,
                new Publisher(
                        name,
                        type,
                        string(o, "lora_name", true),
                        string(o, "additional_salt", true),
                        string(o, "worker_address", true)));
    }

    /** Field {@code field} of {@code o} as a string; null only when {@code optional} and absent or null. */
    public static String string(JsonObject o, String field, boolean optional) throws Invalid {
        Object v = o.getValue(field);
        if (v == null && optional) {
            return null;
        }
        if (!(v instanceof String s)) {
            throw new Invalid("`" + field + "` must be a string");
        }
        return s;
    }

    /** Field {@code field} of {@code o} as an integer from 0 to {@code max}. */
    public static long nonNegative(JsonObject o, String field, long max) throws Invalid {
        Object v = o.getValue(field);
        if (!(v instanceof Integer || v instanceof Long)
                || ((Number) v).longValue() < 0
                || ((Number) v).longValue() > max) {
            throw new Invalid("`" + field + "` must be an integer from 0 to " + max);
        }
        return ((Number) v).longValue();
    }

    private static String endpoint(String endpoint, String field) throws Invalid {
        String reason = ZmqEndpoint.invalidReason(endpoint);
        if (reason != null) {
            throw new Invalid("invalid " + field + ": " + reason);
        }
        return endpoint;
    }
}
