package dev.kvindexer.sim;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** An HTTP client of a running indexer that registers simulated engine ranks ({@code POST /register}, docs/api/dynamo.md#post-register). */
public final class RegisterClient {
    private final URI registerUri;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    /** @param indexer base URL such as {@code http://127.0.0.1:8090} (a trailing /register is accepted too) */
    public RegisterClient(URI indexer) {
        String s = indexer.toString().replaceAll("/+$", "");
        this.registerUri = URI.create(s.endsWith("/register") ? s : s + "/register");
    }

    /** The /register body for one engine rank. */
    public static JsonObject body(SimulatedEngine engine, String modelName, String tenantId) {
        long id = engine.instanceId();
        return new JsonObject()
                .put("instance_id", id >= 0 ? (Object) id : new BigInteger(Long.toUnsignedString(id)))
                .put("dp_rank", engine.dpRank())
                .put("endpoint", engine.endpoint())
                .put("replay_endpoint", engine.replayEndpoint())
                .put("model_name", modelName)
                .put("block_size", engine.config().blockSize())
                .put("routing_group", tenantId);
    }

    /** Registers one rank; 201 (and 200) succeed, anything else throws with the indexer's answer. */
    public void register(SimulatedEngine engine, String modelName, String tenantId)
            throws IOException, InterruptedException {
        String body = body(engine, modelName, tenantId).encode();
        HttpRequest request = HttpRequest.newBuilder(registerUri)
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 201 && response.statusCode() != 200) {
            throw new Refused(
                    "POST " + registerUri + " " + body + " → " + response.statusCode() + " " + response.body());
        }
    }

    /** The indexer answered and refused a registration: what it said, not a network failure. */
    public static final class Refused extends IOException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }
}
