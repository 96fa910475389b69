package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import java.util.Set;
import java.util.TreeSet;

/** Checks a service's OpenAPI document against the routes its router really serves, both ways. */
public final class OpenApiCoverage {
    private static final Set<String> OPERATIONS =
            Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");

    private OpenApiCoverage() {}

    /** "METHOD /path" for every route with a path and methods (catch-alls, failure and error handlers excluded). */
    public static Set<String> served(Router router) {
        Set<String> out = new TreeSet<>();
        for (Route r : router.getRoutes()) {
            if (r.getPath() == null || r.methods() == null || r.methods().isEmpty()) {
                continue;
            }
            for (HttpMethod m : r.methods()) {
                out.add(m.name() + " " + r.getPath());
            }
        }
        return out;
    }

    public static Set<String> documented(JsonObject openApi) {
        assertTrue(openApi.getString("openapi").startsWith("3."), "an OpenAPI 3 document");
        Set<String> out = new TreeSet<>();
        JsonObject paths = openApi.getJsonObject("paths");
        for (String path : paths.fieldNames()) {
            for (String op : paths.getJsonObject(path).fieldNames()) {
                if (OPERATIONS.contains(op)) {
                    JsonObject operation = paths.getJsonObject(path).getJsonObject(op);
                    assertTrue(operation.containsKey("responses") && operation.containsKey("summary"), op + " " + path);
                    out.add(op.toUpperCase(java.util.Locale.ROOT) + " " + path);
                }
            }
        }
        return out;
    }

    public static void assertCovers(Router router, JsonObject openApi) {
        assertEquals(served(router), documented(openApi), "every served route documented, and nothing else");
    }
}
