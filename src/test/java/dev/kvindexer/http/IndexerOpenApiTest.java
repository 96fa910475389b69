package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.OpenApiCoverage;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The indexer's OpenAPI document: served at /openapi.json, and exactly the routes the service serves (with the test
 * routes mounted, as {@link ServeConfig#local} does).
 */
class IndexerOpenApiTest {
    @Test
    void theDocumentIsServedAndCoversEveryRouteBothWays() throws Exception {
        IndexerNode node = IndexerNode.start(ServeConfig.local(0));
        try {
            HttpResponse<String> served = new HttpJson(node.httpPort()).get("/openapi.json");
            assertEquals(200, served.statusCode());
            String checkedIn = new String(
                    getClass().getResourceAsStream("/openapi/indexer.json").readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(checkedIn, served.body());
            HttpVerticle verticle =
                    new HttpVerticle(node.api(), SecurityConfig.NONE, HttpConfig.DEFAULT, "127.0.0.1", 0);
            OpenApiCoverage.assertCovers(verticle.routerOn(node.vertx()), new JsonObject(served.body()));
        } finally {
            node.close();
        }
    }
}
