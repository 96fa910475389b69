package dev.kvindexer.cli;

import dev.kvindexer.web.MsgpackBodies;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Mooncake Conductors' static registrations: the JSON file {@code CONDUCTOR_CONFIG_PATH} names,
 * {@code {"http_server_port": N, "kvevent_instance": {"<name>": {<a /register body>}}}}. Each entry is registered at
 * start through this node's own {@code /register}, as each Conductor subscribes them once its HTTP server runs: an
 * entry with a {@code hash_profile} as the C++ Conductor's (msgpack), any other as the Go Conductor's (JSON). An entry
 * without an {@code instance_id} takes its name. A file that is missing leaves the node without static registrations;
 * one that is not a JSON object stops the start, as it stops the Conductors.
 */
final class ConductorConfigFile {
    private static final Logger LOG = LoggerFactory.getLogger(ConductorConfigFile.class);

    /** One entry as the request that registers it. */
    record Entry(String name, byte[] body, String contentType) {}

    /** What the file asks for: its entries, and the port it names (0 when none). */
    record Contents(List<Entry> entries, int httpServerPort) {}

    private ConductorConfigFile() {}

    /** Reads the file; empty when it does not exist. Throws {@link IllegalArgumentException} for a bad file. */
    static Contents read(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            LOG.warn("CONDUCTOR_CONFIG_PATH {} does not exist: no static registrations", file);
            return new Contents(List.of(), 0);
        }
        return parse(text, file.toString());
    }

    static Contents parse(String text, String source) {
        JsonObject config;
        try {
            config = new JsonObject(text);
        } catch (DecodeException | ClassCastException e) {
            throw new IllegalArgumentException(
                    "CONDUCTOR_CONFIG_PATH " + source + " is not a JSON object: " + e.getMessage());
        }
        int port = config.getValue("http_server_port") instanceof Number n ? n.intValue() : 0;
        List<Entry> entries = new ArrayList<>();
        if (config.getValue("kvevent_instance") instanceof JsonObject instances) {
            for (Map.Entry<String, Object> e : instances) {
                if (!(e.getValue() instanceof JsonObject raw)) {
                    LOG.error("CONDUCTOR_CONFIG_PATH entry {} is not an object: skipped", e.getKey());
                    continue;
                }
                JsonObject body = raw.copy();
                if (!(body.getValue("instance_id") instanceof String id) || id.isEmpty()) {
                    body.put("instance_id", e.getKey());
                }
                entries.add(
                        body.containsKey("hash_profile")
                                ? new Entry(
                                        e.getKey(),
                                        MsgpackBodies.encode(body.encode()).getBytes(),
                                        "application/msgpack")
                                : new Entry(e.getKey(), body.toBuffer().getBytes(), "application/json"));
            }
        }
        return new Contents(entries, port);
    }

    /**
     * Registers every entry at {@code base} (this node's HTTP API); a refused one is logged with the answer, and the
     * rest go on, as with the Conductors. Returns how many were registered.
     */
    static int registerAll(List<Entry> entries, URI base, String authToken) {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        int registered = 0;
        for (Entry e : entries) {
            HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve("/register"))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", e.contentType())
                    .POST(HttpRequest.BodyPublishers.ofByteArray(e.body()));
            if (authToken != null) {
                request.header("Authorization", "Bearer " + authToken);
            }
            try {
                HttpResponse<byte[]> r = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() == 200 || r.statusCode() == 201) {
                    registered++;
                    LOG.info("static registration {} registered", e.name());
                } else {
                    LOG.error(
                            "static registration {} refused: {} {}",
                            e.name(),
                            r.statusCode(),
                            new String(r.body(), StandardCharsets.UTF_8));
                }
            } catch (IOException ex) {
                LOG.error("static registration {} failed: {}", e.name(), ex.toString());
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return registered;
            }
        }
        return registered;
    }
}
