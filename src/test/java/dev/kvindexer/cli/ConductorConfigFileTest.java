package dev.kvindexer.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Conductors' static registrations file: a Go entry (no hash profile) registers through the JSON API, a C++ one
 * (with its hash profile) through the msgpack API, an entry without an instance_id takes its name, a refused entry is
 * skipped and the others go on; a missing file is no registration, a file that is not JSON stops the start.
 */
class ConductorConfigFileTest {
    private static final String PROFILE = "{\"strategy\":\"vllm_v1\",\"algorithm\":\"sha256_cbor\","
            + "\"python_hash_seed\":\"0\",\"index_projection\":\"low64_be\"}";

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    @TempDir
    Path dir;

    @Test
    void everyEntryRegistersThroughItsConductorsApi() throws Exception {
        TestPublisher go = indexer.engine();
        TestPublisher cpp = indexer.engine();
        String file = "{\"http_server_port\": 13333, \"kvevent_instance\": {"
                + "\"prefill-0\": {\"endpoint\": \"" + go.endpoint() + "\", \"type\": \"vLLM\", \"modelname\": \"m\","
                + " \"tenant_id\": \"default\", \"block_size\": 16, \"dp_rank\": 0},"
                + "\"decode\": {\"endpoint\": \"" + cpp.endpoint() + "\", \"type\": \"vLLM\", \"modelname\": \"m\","
                + " \"instance_id\": \"decode-0\", \"block_size\": 16, \"dp_rank\": 0, \"hash_profile\": " + PROFILE
                + "},"
                + "\"broken\": {\"endpoint\": \"tcp://127.0.0.1:1\", \"type\": \"vLLM\", \"modelname\": \"m\","
                + " \"block_size\": 0, \"dp_rank\": 0},"
                + "\"not-an-object\": 5}}";
        Files.writeString(dir.resolve("conductor_config.json"), file, StandardCharsets.UTF_8);
        ConductorConfigFile.Contents contents = ConductorConfigFile.read(dir.resolve("conductor_config.json"));
        assertEquals(13333, contents.httpServerPort());
        assertEquals(3, contents.entries().size(), "the entry that is not an object is skipped");

        int registered = ConductorConfigFile.registerAll(
                contents.entries(),
                URI.create("http://127.0.0.1:" + indexer.node().httpPort()),
                null);
        assertEquals(2, registered, "the refused entry is skipped, the others registered");
        go.awaitSubscriber();
        cpp.awaitSubscriber();
        String services = indexer.http().get("/services", "application/json").body();
        JsonObject all = new JsonObject(services);
        assertEquals(2, all.getInteger("count"), services);
        assertTrue(services.contains("\"InstanceID\":\"prefill-0\""), "named by its key: " + services);
        assertTrue(services.contains("\"InstanceID\":\"decode-0\""), "named by its instance_id: " + services);
        assertTrue(
                indexer.http().get("/workers").body().contains("\"instance_name\":\"prefill-0\""),
                "the Go entry is a registration of the JSON API");
    }

    @Test
    void aMissingFileIsNoRegistrationAndABadOneStopsTheStart() throws Exception {
        assertEquals(
                0,
                ConductorConfigFile.read(dir.resolve("absent.json")).entries().size());
        Files.writeString(dir.resolve("bad.json"), "{\"kvevent_instance\": ", StandardCharsets.UTF_8);
        IllegalArgumentException bad =
                assertThrows(IllegalArgumentException.class, () -> ConductorConfigFile.read(dir.resolve("bad.json")));
        assertTrue(bad.getMessage().contains("is not a JSON object"), bad.getMessage());
        assertEquals(0, ConductorConfigFile.parse("{}", "inline").httpServerPort(), "no port named: 0");
    }
}
