package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.RawHttp;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's page and files come from the jar with a strict content policy; under --auth-all the page loads
 * without a token while everything with data stays guarded, however the path is spelled.
 */
class DashboardRoutesTest {
    private static final String TOKEN = "dashboard-token";

    private static IndexerNode start(SecurityConfig security) throws Exception {
        return IndexerNode.start(ServeConfig.local(0).withSecurity(security));
    }

    @Test
    void servesThePageAndItsFilesFromTheJar() throws Exception {
        IndexerNode node = start(SecurityConfig.NONE);
        try {
            HttpJson http = new HttpJson(node.httpPort());
            for (String path : List.of("/", "/ui/", "/ui/index.html")) {
                HttpResponse<String> page = http.get(path);
                assertEquals(200, page.statusCode(), path);
                assertTrue(page.headers().firstValue("content-type").orElse("").startsWith("text/html"), path);
                assertTrue(page.body().contains("<script src=\"/ui/app.js\""), path);
                assertTrue(
                        page.headers()
                                .firstValue("content-security-policy")
                                .orElse("")
                                .contains("default-src 'self'"),
                        "no inline or foreign script may run: " + path);
            }
            HttpResponse<String> script = http.get("/ui/app.js");
            assertEquals(200, script.statusCode());
            assertTrue(script.headers().firstValue("content-type").orElse("").contains("javascript"));
            assertEquals(200, http.get("/ui/style.css").statusCode());
            assertEquals(404, http.get("/ui/no-such-file.js").statusCode());
            assertEquals(
                    201,
                    http.post(
                                    "/register",
                                    "{\"instance_id\":3,\"endpoint\":\"tcp://127.0.0.1:1\","
                                            + "\"replay_endpoint\":\"tcp://127.0.0.1:2\",\"model_name\":\"m\","
                                            + "\"block_size\":16}")
                            .statusCode());
            HttpResponse<String> overview = http.get("/overview");
            assertEquals(200, overview.statusCode());
            JsonObject o = new JsonObject(overview.body());
            for (String member : List.of("node", "cluster", "memory", "totals", "partitions", "workers")) {
                assertTrue(o.containsKey(member), member);
            }
            assertEquals(false, o.getJsonObject("cluster").getBoolean("clustered"));
            assertTrue(o.containsKey("selection") && o.getValue("selection") == null, "no selection service here");
            JsonObject rank = o.getJsonArray("workers")
                    .getJsonObject(0)
                    .getJsonArray("ranks")
                    .getJsonObject(0);
            assertEquals("tcp://127.0.0.1:1", rank.getString("endpoint"), "the endpoint the rank listens to");
            assertEquals("tcp://127.0.0.1:2", rank.getString("replay_endpoint"), "and where it asks for replays");
        } finally {
            node.close();
        }
    }

    @Test
    void authAllLetsThePageLoadAndGuardsItsData() throws Exception {
        IndexerNode node = start(new SecurityConfig(TOKEN, true, null, null));
        try {
            HttpJson anonymous = new HttpJson(node.httpPort());
            assertEquals(200, anonymous.get("/").statusCode(), "the page asks for the token itself");
            assertEquals(200, anonymous.get("/ui/app.js").statusCode());
            for (String path : List.of("/overview", "/workers", "/metrics")) {
                assertEquals(401, anonymous.get(path).statusCode(), path);
            }
            assertEquals(
                    200,
                    anonymous
                            .withHeader("Authorization", "Bearer " + TOKEN)
                            .get("/overview")
                            .statusCode());
            // A path that only looks like the page's must not pass: routing sees the normalized one.
            for (String sneaky :
                    List.of("/ui/../overview", "/ui/%2e%2e/overview", "/ui/..%2Foverview", "/ui/../workers")) {
                try (RawHttp raw = new RawHttp(node.httpPort())) {
                    raw.send("GET " + sneaky + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
                    RawHttp.Answer answer = raw.answer(Duration.ofSeconds(5));
                    assertTrue(
                            answer.status() == 401 || answer.status() == 404 || answer.status() == 400,
                            sneaky + " answered " + answer.status() + ": " + answer.body());
                    assertTrue(
                            !answer.body().contains("\"workers\"")
                                    && !answer.body().contains("instance_id"),
                            sneaky + " leaked data: " + answer.body());
                }
            }
        } finally {
            node.close();
        }
    }
}
