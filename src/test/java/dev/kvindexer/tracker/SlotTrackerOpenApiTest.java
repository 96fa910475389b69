package dev.kvindexer.tracker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.cli.SlotTrackerCommand;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.OpenApiCoverage;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The slot tracker's OpenAPI document: served at /openapi.json, and exactly the routes the service serves. */
class SlotTrackerOpenApiTest {
    @Test
    void theDocumentIsServedAndCoversEveryRouteBothWays() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            SlotTrackerVerticle tracker =
                    SlotTrackerCommand.deploy(vertx, SlotTrackerConfig.on("127.0.0.1", 0), () -> "");
            HttpResponse<String> served = new HttpJson(tracker.actualPort()).get("/openapi.json");
            assertEquals(200, served.statusCode());
            String checkedIn = new String(
                    getClass().getResourceAsStream("/openapi/slot-tracker.json").readAllBytes(),
                    StandardCharsets.UTF_8);
            assertEquals(checkedIn, served.body());
            OpenApiCoverage.assertCovers(tracker.router(), new JsonObject(served.body()));
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }
}
