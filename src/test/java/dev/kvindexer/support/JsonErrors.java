package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.Set;

/** The error answer every JSON service gives: the status, {@code {"error": "..."}} alone, as application/json. */
public final class JsonErrors {
    private JsonErrors() {}

    public static void assertError(int status, String text, HttpResponse<String> r) {
        assertEquals(status, r.statusCode(), r.body());
        JsonObject e = new JsonObject(r.body());
        assertEquals(Set.of("error"), e.fieldNames(), r.body());
        assertTrue(e.getString("error").contains(text), r.body());
        assertEquals("application/json", r.headers().firstValue("content-type").orElse(""));
    }
}
