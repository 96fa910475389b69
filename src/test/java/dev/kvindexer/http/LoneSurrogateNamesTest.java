package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SlotTrackerCommand;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.tracker.SlotTrackerVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A JSON body whose escapes leave a lone UTF-16 surrogate in a string (a name, most of all) holds no Unicode text. The
 * reference's parser (serde_json) refuses it as a syntax error, so it is 400 with the parse-error wording on every
 * route of both services, and nothing changes. Surrogate pairs (an emoji) are names like any other.
 */
class LoneSurrogateNamesTest {
    private static final String LONE = "\\ud800";
    private static final String LONE_LOW = "\\udc00x";

    @RegisterExtension
    static final LocalNode indexer = new LocalNode();

    private static String dynamoRegister(String model, String routingGroup) {
        return "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"" + model + "\","
                + "\"routing_group\":\"" + routingGroup + "\",\"block_size\":4}";
    }

    private static String mooncakeRegister(String model, String instance, String lora) {
        return "{\"endpoint\":\"tcp://127.0.0.1:1\",\"type\":\"vLLM\",\"modelname\":\"" + model
                + "\",\"instance_id\":\"" + instance + "\",\"block_size\":4,\"lora_name\":\"" + lora + "\"}";
    }

    private static void assertRefused(HttpResponse<String> r) {
        assertEquals(400, r.statusCode(), r.body());
        assertEquals(
                "Failed to parse the request body as JSON: lone leading surrogate in hex escape",
                new JsonObject(r.body()).getString("error"),
                r.body());
    }

    @Test
    void dynamoNamesWithALoneSurrogateAreASyntaxErrorAndChangeNothing() {
        assertRefused(indexer.http().post("/register", dynamoRegister("m" + LONE, "g")));
        assertRefused(indexer.http().post("/register", dynamoRegister("m", LONE_LOW)));
        assertRefused(indexer.http()
                .post(
                        "/register",
                        dynamoRegister("m", "g")
                                .replace("routing_group", "tenant_id")
                                .replace("\"g\"", "\"" + LONE + "\"")));
        assertEquals("[]", indexer.http().get("/workers").body(), "no refused registration took effect");
        assertEquals(
                201,
                indexer.http()
                        .post("/register", dynamoRegister("m\\ud83d\\ude00", "g"))
                        .statusCode(),
                "a surrogate pair is a character like any other");
        assertRefused(indexer.http().post("/query", "{\"model_name\":\"m" + LONE + "\",\"token_ids\":[1]}"));
        assertRefused(indexer.http()
                .post(
                        "/query",
                        "{\"model_name\":\"m\\ud83d\\ude00\",\"routing_group\":\"g\"," + "\"lora_name\":\"" + LONE
                                + "\",\"token_ids\":[1,2,3,4]}"));
        assertRefused(indexer.http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"" + LONE + "\"}"));
        assertEquals(1, new JsonArray(indexer.http().get("/workers").body()).size());
        assertEquals(
                200,
                indexer.http()
                        .post(
                                "/unregister",
                                "{\"instance_id\":1,\"model_name\":\"m\\ud83d\\ude00\"," + "\"routing_group\":\"g\"}")
                        .statusCode());
    }

    @Test
    void mooncakeBodiesWithALoneSurrogateAreASyntaxErrorToo() {
        assertRefused(indexer.http().post("/register", mooncakeRegister("m" + LONE, "engine-a", "l")));
        assertRefused(indexer.http().post("/register", mooncakeRegister("m", "engine" + LONE, "l")));
        assertRefused(indexer.http().post("/register", mooncakeRegister("m", "engine-a", LONE_LOW)));
        assertRefused(indexer.http()
                .post(
                        "/register",
                        mooncakeRegister("m", "engine-a", "l").replace("}", ",\"tenant_id\":\"" + LONE + "\"}")));
        assertEquals(
                "{\"count\":0,\"services\":[]}",
                indexer.http().get("/services", "application/json").body(),
                "no refused registration took effect");
        assertRefused(indexer.http().post("/query", "{\"model\":\"m" + LONE + "\",\"token_ids\":[1]}"));
        assertRefused(indexer.http().post("/unregister", "{\"instance_id\":\"" + LONE + "\"}"));
    }

    @Test
    void slotTrackerBodiesWithALoneSurrogateAreASyntaxError() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            SlotTrackerVerticle tracker =
                    SlotTrackerCommand.deploy(vertx, SlotTrackerConfig.on("127.0.0.1", 0), () -> "");
            HttpJson slots = new HttpJson(tracker.actualPort());
            String register = "{\"worker_id\":7,\"model_name\":\"m\",\"tenant_id\":\"t\",\"block_size\":16,"
                    + "\"dp_start\":0,\"dp_size\":1}";
            for (String field : List.of("model_name", "tenant_id")) {
                assertRefused(slots.post(
                        "/register", register.replace("\"" + field + "\":\"", "\"" + field + "\":\"" + LONE)));
            }
            assertEquals("[]", slots.get("/workers").body());
            assertEquals(201, slots.post("/register", register).statusCode());
            assertRefused(slots.post(
                    "/add",
                    "{\"model_name\":\"m\",\"tenant_id\":\"t\",\"request_id\":\"r" + LONE
                            + "\",\"worker_id\":7,\"dp_rank\":0,\"sequence_hashes\":[1]}"));
            assertTrue(
                    slots.get("/loads").body().contains("\"active_prefill_tokens\":0"),
                    slots.get("/loads").body());
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
