package dev.kvindexer.sim;

import dev.kvindexer.hash.HashProfile;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

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
    public static JsonObject body(SimulatedEngine engine, String modelName, String routingGroup) {
        long id = engine.instanceId();
        return new JsonObject()
                .put("instance_id", id >= 0 ? (Object) id : new BigInteger(Long.toUnsignedString(id)))
                .put("dp_rank", engine.dpRank())
                .put("endpoint", engine.endpoint())
                .put("replay_endpoint", engine.replayEndpoint())
                .put("model_name", modelName)
                .put("block_size", engine.config().blockSize())
                .put("routing_group", routingGroup);
    }

    /**
     * The C++ Mooncake Conductor's msgpack /register body for one engine rank of {@link EngineHashKind#SHA256_CBOR}:
     * its instance id in decimal, and the hash profile its blocks are hashed by.
     */
    public static byte[] conductorBody(SimulatedEngine engine, String modelName, String routingGroup) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(9);
            p.packString("type").packString("vLLM");
            p.packString("endpoint").packString(engine.endpoint());
            p.packString("replay_endpoint").packString(engine.replayEndpoint());
            p.packString("modelname").packString(modelName);
            p.packString("tenant_id").packString(routingGroup == null ? "" : routingGroup);
            p.packString("instance_id").packString(Long.toUnsignedString(engine.instanceId()));
            p.packString("block_size").packInt(engine.config().blockSize());
            p.packString("dp_rank").packInt(engine.dpRank());
            packConductorProfile(p);
            return p.toByteArray();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A Conductor registration's {@code hash_profile} member: {@link EngineHashKind#CONDUCTOR_PROFILE}. */
    static void packConductorProfile(MessagePacker p) throws IOException {
        HashProfile profile = EngineHashKind.CONDUCTOR_PROFILE;
        p.packString("hash_profile").packMapHeader(4);
        p.packString("strategy").packString(HashProfile.STRATEGY);
        p.packString("algorithm").packString(profile.algorithm().wireName());
        p.packString("python_hash_seed").packString(profile.pythonHashSeed());
        p.packString("index_projection").packString(HashProfile.INDEX_PROJECTION);
    }

    /**
     * Registers one rank; 201 (and 200) succeed, anything else throws with the indexer's answer. An engine of
     * {@link EngineHashKind#SHA256_CBOR} registers the C++ Conductor's way, any other as with Dynamo's indexer.
     */
    public void register(SimulatedEngine engine, String modelName, String routingGroup)
            throws IOException, InterruptedException {
        boolean conductor = engine.config().hashKind() == EngineHashKind.SHA256_CBOR;
        byte[] bodyBytes = conductor
                ? conductorBody(engine, modelName, routingGroup)
                : body(engine, modelName, routingGroup).encode().getBytes(StandardCharsets.UTF_8);
        post(
                registerUri,
                bodyBytes,
                conductor ? "application/msgpack" : "application/json",
                conductor ? "(msgpack) " + engine.endpoint() : new String(bodyBytes, StandardCharsets.UTF_8));
    }

    /** POSTs one body; 201 and 200 succeed, anything else throws {@link Refused} with the answer. */
    private void post(URI uri, byte[] body, String contentType, String shown) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 201 && response.statusCode() != 200) {
            throw new Refused("POST " + uri + " " + shown + " → " + response.statusCode() + " " + response.body());
        }
    }

    /**
     * The selection service's catalog record of one simulated instance (its ranks in order): its ranks' publishers as
     * {@code kv_events_endpoints}, an opaque {@code endpoint} callers would be handed.
     */
    public static JsonObject workerBody(List<SimulatedEngine> ranks, String modelName, String routingGroup) {
        SimulatedEngine first = ranks.get(0);
        JsonObject endpoints = new JsonObject();
        ranks.forEach(r -> endpoints.put(Integer.toString(r.dpRank()), r.endpoint()));
        JsonObject body = new JsonObject()
                .put("worker_id", new BigInteger(Long.toUnsignedString(first.instanceId())))
                .put("model_name", modelName)
                .put("routing_group", routingGroup)
                .put("endpoint", "sim://engine-" + Long.toUnsignedString(first.instanceId()))
                .put("block_size", first.config().blockSize())
                .put("data_parallel_start_rank", first.dpRank())
                .put("data_parallel_size", ranks.size())
                .put("kv_events_endpoints", endpoints);
        return ranks.size() == 1 ? body.put("replay_endpoint", first.replayEndpoint()) : body;
    }

    /**
     * Adds every instance of {@code engines} (instance-major, {@code dpRanks} ranks each) to the catalog of the
     * selection service at this client's base URL ({@code POST /workers}); 201 and 200 succeed.
     */
    public void catalog(List<SimulatedEngine> engines, int dpRanks, String modelName, String routingGroup)
            throws IOException, InterruptedException {
        URI workers = URI.create(registerUri.toString().replaceAll("/register$", "") + "/workers");
        for (int i = 0; i < engines.size(); i += dpRanks) {
            String body = workerBody(engines.subList(i, i + dpRanks), modelName, routingGroup)
                    .encode();
            post(workers, body.getBytes(StandardCharsets.UTF_8), "application/json", body);
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
