package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.NetworkConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A dump whose snapshots the node's network budget cannot hold is a 503 with Retry-After in the error shape, in JSON,
 * binary and msgpack alike; nothing is held afterwards, and a budget that can hold it answers whole.
 */
class DumpAdmissionTest {
    private static final int BLOCK = 16;
    private IndexerNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    private HttpJson startWithBudget(long bytes) throws Exception {
        node = IndexerNode.start(ServeConfig.local(0).withNetwork(new NetworkConfig(bytes, Duration.ofSeconds(15))));
        HttpJson http = new HttpJson(node.httpPort());
        JsonObject register = new JsonObject()
                .put("endpoint", "tcp://127.0.0.1:1")
                .put("type", "vLLM")
                .put("modelname", "m")
                .put("instance_id", "engine")
                .put("block_size", BLOCK);
        assertEquals(200, http.post("/register", register.encode()).statusCode());
        SplittableRandom random = new SplittableRandom(1);
        for (int id = 0; id < 50; id++) {
            JsonArray hashes = new JsonArray();
            for (int i = 0; i < 2000; i++) {
                hashes.add(new BigInteger(Long.toUnsignedString(random.nextLong())));
            }
            JsonObject event = new JsonObject()
                    .put("event_id", id)
                    .put("timestamp", 0)
                    .put("event_type", "stored")
                    .put("model_name", "m")
                    .put("block_size", BLOCK)
                    .put("tenant_id", "default")
                    .put("backend_id", "engine")
                    .put("medium", "gpu")
                    .put("dp_rank", 0)
                    .put("seq_hashes", hashes)
                    .put("base_block_idx", 0);
            assertEquals(200, http.post("/events", event.encode()).statusCode());
        }
        return http;
    }

    @Test
    void aDumpTheBudgetCannotHoldIsA503WithRetryAfter() throws Exception {
        HttpJson http = startWithBudget(1 << 20);
        assertRefused(http.getBytes("/dump", "application/json"));
        assertRefused(http.getBytes("/dump", SnapshotWriter.MEDIA_TYPE));
        assertRefused(http.getBytes("/dump", "application/msgpack"));
        MetricsPage metrics = MetricsPage.of(http);
        assertEquals(3, metrics.value("kvindexer_network_refused_total{port=\"http\"}"));
        assertEquals(0, metrics.value("kvindexer_network_memory_held_bytes"), "nothing held after the refusals");
    }

    @Test
    void aBudgetThatHoldsTheSnapshotsAnswersWholeAndGivesEverythingBack() throws Exception {
        HttpJson http = startWithBudget(64 << 20);
        HttpResponse<String> json = http.get("/dump");
        assertEquals(200, json.statusCode());
        assertEquals(
                100_000,
                new JsonObject(json.body())
                        .getJsonObject("m:default")
                        .getJsonArray("sequence_events")
                        .size());
        HttpResponse<byte[]> binary = http.getBytes("/dump", SnapshotWriter.MEDIA_TYPE);
        assertEquals(200, binary.statusCode());
        assertTrue(binary.body().length > 100_000 * 8, binary.body().length + " bytes");
        MetricsPage metrics = MetricsPage.of(http);
        assertEquals(0, metrics.value("kvindexer_network_memory_held_bytes"));
        assertTrue(metrics.value("kvindexer_network_memory_peak_bytes") > 100_000 * 8, "the snapshots were held");
    }

    private static void assertRefused(HttpResponse<byte[]> r) {
        assertEquals(503, r.statusCode());
        assertEquals(
                String.valueOf(DumpAdmission.RETRY_AFTER_SECONDS),
                r.headers().firstValue("retry-after").orElse(null));
        String body = new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(new JsonObject(body).getString("error").contains("network budget"), body);
    }
}
