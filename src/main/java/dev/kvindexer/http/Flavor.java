package dev.kvindexer.http;

import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.Locale;

/**
 * Which JSON API a request on a shared route speaks, Dynamo or Mooncake's (docs/api/mooncake-json.md; the C++ Conductor's msgpack
 * bodies never get this far), and for Mooncake which response shape it wants (docs/api/mooncake-json.md#two-apis-on-one-port, docs/api/mooncake-json.md#post-query).
 * The body decides: {@code model_name} means Dynamo; {@code model} or {@code modelname}, or a string
 * {@code instance_id} (Dynamo's is a number), mean Mooncake; anything else is Dynamo, which then names the missing
 * field. No request that is valid in one API is served by the other. The {@code flavor} query parameter overrides
 * the body ({@code dynamo}, {@code mooncake}, {@code mooncake-data}, {@code mooncake-instances}); {@code format}
 * ({@code tenant}, {@code data}, {@code instances}) picks the Mooncake shape.
 */
enum Flavor {
    DYNAMO,
    /** The RFC's tenant-keyed shape, Mooncake's default. */
    MOONCAKE_JSON_TENANT,
    /** The older document's {@code {"data": {...}}} shape. */
    MOONCAKE_JSON_DATA,
    /** The C++ Conductor's {@code {"instances": {...}}} shape with {@code rank_matches}, in JSON. */
    MOONCAKE_JSON_INSTANCES;

    boolean mooncakeJson() {
        return this != DYNAMO;
    }

    /** The flavor the query parameters ask for, or null when they leave it to the body. */
    static Flavor requested(RoutingContext ctx) {
        String flavor = lower(ctx.queryParams().get("flavor"));
        String format = lower(ctx.queryParams().get("format"));
        Flavor shape = format == null
                ? null
                : switch (format) {
                    case "tenant" -> MOONCAKE_JSON_TENANT;
                    case "data" -> MOONCAKE_JSON_DATA;
                    case "instances" -> MOONCAKE_JSON_INSTANCES;
                    default ->
                        throw new HttpError(400, "unknown format `" + format + "`: expected tenant, data or instances");
                };
        if (flavor == null) {
            return shape;
        }
        return switch (flavor) {
            case "dynamo" -> DYNAMO;
            case "mooncake", "mooncake-tenant" -> shape != null ? shape : MOONCAKE_JSON_TENANT;
            case "mooncake-data" -> MOONCAKE_JSON_DATA;
            case "mooncake-instances" -> MOONCAKE_JSON_INSTANCES;
            default ->
                throw new HttpError(
                        400,
                        "unknown flavor `" + flavor
                                + "`: expected dynamo, mooncake, mooncake-data or mooncake-instances");
        };
    }

    /** The flavor a body speaks when the query parameters do not say. */
    static Flavor of(JsonRequest body) {
        if (body.has("model_name")) {
            return DYNAMO;
        }
        if (body.has("model") || body.has("modelname") || body.isString("instance_id")) {
            return MOONCAKE_JSON_TENANT;
        }
        return DYNAMO;
    }

    private static String lower(String s) {
        return s == null ? null : s.trim().toLowerCase(Locale.ROOT);
    }
}
