package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.support.LocalNode;
import dev.kvindexer.wire.Pack;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * A registration whose endpoint no subscriber can use is the client's error in every flavor: a 400 in the flavor's
 * own error body, and nothing registered. Dynamo words it as its {@code validate_endpoint} does, the Mooncake JSON
 * flavor as its {@code invalid_registration}, and the C++ Conductor flavor as the reference's subscribe failure in its
 * msgpack envelope (where the reference itself answers 500).
 */
class EndpointRefusalTest {
    private static final List<String> ENDPOINTS =
            List.of("not-an-endpoint", "tcp://[::1:5557", "tcp://::1:5557", "tcp://:5558", "ipc://", "udp://h:1");
    private static final Map<String, String> REASONS = Map.of(
            "not-an-endpoint", "missing scheme",
            "tcp://[::1:5557", "missing closing `]`",
            "tcp://::1:5557", "missing TCP port",
            "tcp://:5558", "missing TCP host",
            "ipc://", "missing address",
            "udp://h:1", "unsupported scheme `udp`");

    @RegisterExtension
    static final LocalNode indexer = new LocalNode();

    private String state() {
        return indexer.http().get("/workers").body()
                + indexer.http().get("/services").body();
    }

    @Test
    void dynamoAnswers400WithTheReferencesText() {
        String before = state();
        for (String endpoint : ENDPOINTS) {
            String message = "invalid ZMQ endpoint `" + endpoint + "`: " + REASONS.get(endpoint);
            HttpResponse<String> r = indexer.http()
                    .post(
                            "/register",
                            new JsonObject()
                                    .put("instance_id", 1)
                                    .put("endpoint", endpoint)
                                    .put("model_name", "m")
                                    .put("block_size", 16)
                                    .encode());
            assertEquals(400, r.statusCode(), endpoint);
            assertEquals(new JsonObject().put("error", message), new JsonObject(r.body()), endpoint);
            HttpResponse<String> replay = indexer.http()
                    .post(
                            "/register",
                            new JsonObject()
                                    .put("instance_id", 1)
                                    .put("endpoint", "tcp://127.0.0.1:5557")
                                    .put("replay_endpoint", endpoint)
                                    .put("model_name", "m")
                                    .put("block_size", 16)
                                    .encode());
            assertEquals(400, replay.statusCode(), endpoint);
            assertEquals(
                    new JsonObject().put("error", "invalid replay endpoint `" + endpoint + "`: " + message),
                    new JsonObject(replay.body()),
                    endpoint);
        }
        assertEquals(before, state(), "nothing was registered");
    }

    @Test
    void mooncakeJsonAnswers400InvalidRegistrationNamingTheField() {
        String before = state();
        for (String endpoint : ENDPOINTS) {
            HttpResponse<String> r = indexer.http()
                    .post(
                            "/register",
                            new JsonObject()
                                    .put("endpoint", endpoint)
                                    .put("type", "vLLM")
                                    .put("modelname", "mc")
                                    .put("instance_id", "engine-a")
                                    .put("block_size", 16)
                                    .encode());
            assertEquals(400, r.statusCode(), endpoint);
            assertEquals(
                    new JsonObject()
                            .put("error", "invalid_registration")
                            .put("reason", "invalid ZMQ endpoint `" + endpoint + "`: " + REASONS.get(endpoint))
                            .put("field", "endpoint"),
                    new JsonObject(r.body()),
                    endpoint);
        }
        assertEquals(before, state(), "nothing was registered");
    }

    @Test
    void cppConductorAnswers400InItsEnvelopeInsteadOf500() throws IOException {
        String before = state()
                + decoded(indexer.http()
                        .getBytes("/services", "application/msgpack")
                        .body())
                + decoded(indexer.http()
                        .getBytes("/global_view", "application/msgpack")
                        .body());
        for (String endpoint : ENDPOINTS) {
            HttpResponse<byte[]> r =
                    indexer.http().postBytes("/register", Pack.of(cpp(endpoint)), "application/msgpack");
            assertEquals(400, r.statusCode(), endpoint);
            assertEquals(
                    new JsonObject()
                            .put(
                                    "error",
                                    "Failed to subscribe: failed to start ZMQ client: initial connection failed: "
                                            + "failed to connect to " + endpoint + ": Invalid argument")
                            .put("reason", "invalid_registration")
                            .put("field", "endpoint"),
                    new JsonObject(decoded(r.body())),
                    endpoint);
        }
        String after = state()
                + decoded(indexer.http()
                        .getBytes("/services", "application/msgpack")
                        .body())
                + decoded(indexer.http()
                        .getBytes("/global_view", "application/msgpack")
                        .body());
        assertEquals(before, after, "nothing was registered, no context was created");
    }

    private static Map<String, Object> cpp(String endpoint) {
        Map<String, Object> profile = new LinkedHashMap<>();
        profile.put("strategy", "vllm_v1");
        profile.put("algorithm", "sha256_cbor");
        profile.put("python_hash_seed", "0");
        profile.put("index_projection", "low64_be");
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("endpoint", endpoint);
        r.put("type", "vLLM");
        r.put("modelname", "cpp-model");
        r.put("instance_id", "engine-b");
        r.put("block_size", 16);
        r.put("dp_rank", 0);
        r.put("hash_profile", profile);
        return r;
    }

    private static String decoded(byte[] msgpack) throws IOException {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(msgpack)) {
            return in.unpackValue().toJson();
        }
    }
}
