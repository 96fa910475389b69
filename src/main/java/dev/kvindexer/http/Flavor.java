package dev.kvindexer.http;

import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.Locale;

/**
 * Which API a request on a shared route speaks, and for Mooncake which response shape it wants (SPEC §8.1, §8.4).
 * The body decides: {@code model_name} means Dynamo; {@code model} or {@code modelname}, or a string
 * {@code instance_id} (Dynamo's is a number), mean Mooncake; anything else is Dynamo, which then names the missing
 * field. No request that is valid in one API is served by the other. The {@code flavor} query parameter overrides
 * the body ({@code dynamo}, {@code mooncake}, {@code mooncake-data}, {@code mooncake-instances}); {@code format}
 * ({@code tenant}, {@code data}, {@code instances}) picks the Mooncake shape.
 */
enum Flavor {
    DYNAMO,
    /** The RFC's tenant-keyed shape, Mooncake's default. */
    MOONCAKE_TENANT,
    /** The older document's {@code {"data": {...}}} shape. */
    MOONCAKE_DATA,
    /** The C++ Conductor's {@code {"instances": {...}}} shape with {@code rank_matches}. */
    MOONCAKE_INSTANCES;

    boolean mooncake() {
        return this != DYNAMO;
    }

    /** The flavor the query parameters ask for, or null when they leave it to the body. */
    static Flavor requested(RoutingContext ctx) {
        String flavor = lower(ctx.queryParams().get("flavor"));
        String format = lower(ctx.queryParams().get("format"));
        Flavor shape = format == null ? null : switch (format) {
            case "tenant" -> MOONCAKE_TENANT;
            case "data" -> MOONCAKE_DATA;
            case "instances" -> MOONCAKE_INSTANCES;
            default -> throw new HttpError(400, "unknown format `" + format + "`: expected tenant, data or instances");
        };
        if (flavor == null) {
            return shape;
        }
        return switch (flavor) {
            case "dynamo" -> DYNAMO;
            case "mooncake", "mooncake-tenant" -> shape != null ? shape : MOONCAKE_TENANT;
            case "mooncake-data" -> MOONCAKE_DATA;
            case "mooncake-instances" -> MOONCAKE_INSTANCES;
            default -> throw new HttpError(400, "unknown flavor `" + flavor
                    + "`: expected dynamo, mooncake, mooncake-data or mooncake-instances");
        };
    }

    /** The flavor a body speaks when the query parameters do not say. */
    static Flavor of(JsonRequest body) {
        if (body.has("model_name")) {
            return DYNAMO;
        }
        if (body.has("model") || body.has("modelname") || body.isString("instance_id")) {
            return MOONCAKE_TENANT;
        }
        return DYNAMO;
    }

    private static String lower(String s) {
        return s == null ? null : s.trim().toLowerCase(Locale.ROOT);
    }
}
