package dev.kvindexer.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.AccessLogConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --access-log} (docs/api/dynamo.md#test-routes-log-reopening-access-log): one JSON line per request, and reopening the file after a rotation. */
class AccessLogTest {
    @TempDir
    Path dir;

    private IndexerNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    private static List<JsonObject> lines(Path file) {
        try {
            return Files.exists(file)
                    ? Files.readAllLines(file).stream().map(JsonObject::new).toList()
                    : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private HttpResponse<String> traced(String path, String body, String traceId) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                .header("content-type", "application/json")
                .header("x-request-id", traceId)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .timeout(Duration.ofSeconds(10))
                .build();
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .build()
                .send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void everyRequestIsOneJsonLineWithItsModelStatusTraceIdAndDuration() throws Exception {
        Path log = dir.resolve("access.log");
        node = IndexerNode.start(ServeConfig.local(0).withAccessLog(new AccessLogConfig(log, "x-request-id", false)));
        HttpJson http = new HttpJson(node.httpPort());
        Instant before = Instant.now().minusSeconds(1);
        assertEquals(
                404,
                traced("/query", "{\"model_name\":\"llama\",\"token_ids\":[1,2,3]}", "trace-1")
                        .statusCode());
        http.post("/query", "{\"model\":\"deepseek\",\"token_ids\":[1]}");
        http.get("/health");
        http.get("/workers?model_name=llama");
        http.get("/no-such-route");
        Await.until("five lines", Duration.ofSeconds(10), () -> lines(log).size() >= 5);
        List<JsonObject> lines = lines(log);
        assertEquals(5, lines.size());
        for (JsonObject line : lines) {
            assertEquals(
                    Set.of("ts", "trace_id", "method", "path", "model", "status", "duration_ms"), line.fieldNames());
            assertTrue(line.getString("ts").endsWith("Z"), line.encode());
            assertTrue(!Instant.parse(line.getString("ts")).isBefore(before), line.encode());
            assertTrue(line.getDouble("duration_ms") >= 0, line.encode());
        }
        JsonObject query = lines.get(0);
        assertEquals("trace-1", query.getString("trace_id"));
        assertEquals("POST", query.getString("method"));
        assertEquals("/query", query.getString("path"));
        assertEquals("llama", query.getString("model"));
        assertEquals(404, query.getInteger("status"), "no indexer for that model yet");
        assertEquals("deepseek", lines.get(1).getString("model"), "the Mooncake flavor's model");
        assertNull(lines.get(1).getString("trace_id"));
        assertNull(lines.get(2).getString("model"));
        assertEquals(200, lines.get(2).getInteger("status"));
        assertEquals("llama", lines.get(3).getString("model"), "a GET's model_name parameter");
        assertEquals(404, lines.get(4).getInteger("status"));
    }

    @Test
    void aLoneSurrogateInARequestNeitherStopsTheLogNorReachesIt() throws Exception {
        Path log = dir.resolve("access.log");
        node = IndexerNode.start(ServeConfig.local(0).withAccessLog(new AccessLogConfig(log, "x-request-id", false)));
        HttpJson http = new HttpJson(node.httpPort());
        assertEquals(
                400,
                http.post("/query", "{\"model_name\":\"m\\ud800\",\"token_ids\":[1]}")
                        .statusCode());
        http.get("/health");
        http.post("/query", "{\"model_name\":\"\\ud83d\\ude00\",\"token_ids\":[1]}");
        Await.until("three lines", Duration.ofSeconds(10), () -> lines(log).size() >= 3);
        List<JsonObject> lines = lines(log);
        assertEquals(400, lines.get(0).getInteger("status"));
        assertNull(lines.get(0).getString("model"), "a body that is no Unicode text names no model");
        assertEquals("/health", lines.get(1).getString("path"));
        assertEquals("\ud83d\ude00", lines.get(2).getString("model"), "a surrogate pair is a character like any other");
        assertEquals(0, MetricsPage.of(http).value("kvindexer_access_log_write_errors_total"));
    }

    @Test
    void whatUtf8CannotEncodeIsWrittenAsAJsonEscape() {
        String line = "{\"model\":" + io.vertx.core.json.Json.encode("m\ud800 \udc00\ud83d\ude00x\ud83d") + "}";
        String written = AccessLog.encodable(line);
        assertTrue(StandardCharsets.UTF_8.newEncoder().canEncode(written), written);
        assertEquals(
                "m\ud800 \udc00\ud83d\ude00x\ud83d",
                new JsonObject(written).getString("model"),
                "the escapes stand for the same text; the pair is kept as it is");
    }

    @Test
    void aFailedWriteIsCountedAndTheFileOpenedAgainForTheNextLine() throws Exception {
        Path log = dir.resolve("access.log");
        node = IndexerNode.start(ServeConfig.local(0).withAccessLog(new AccessLogConfig(log, "x-request-id", false)));
        HttpJson http = new HttpJson(node.httpPort());
        http.get("/health");
        Await.until("the first line", Duration.ofSeconds(10), () -> lines(log).size() == 1);
        // Rotated away, and a directory where the file was: no line can be written until it is gone.
        Files.move(log, dir.resolve("access.log.1"));
        Files.createDirectory(log);
        assertEquals(200, http.post("/reopen_logs", "").statusCode());
        http.get("/health");
        Await.until(
                "write errors counted",
                Duration.ofSeconds(10),
                () -> MetricsPage.of(http).value("kvindexer_access_log_write_errors_total") >= 2);
        Files.delete(log);
        http.get("/workers");
        Await.until(
                "a line in a new file",
                Duration.ofSeconds(10),
                () -> Files.isRegularFile(log)
                        && lines(log).stream().anyMatch(l -> l.getString("path").equals("/workers")));
    }

    @Test
    void reopenLogsStartsANewFileAfterARotation() throws Exception {
        Path log = dir.resolve("access.log");
        node = IndexerNode.start(ServeConfig.local(0)
                .withAccessLog(new AccessLogConfig(log, AccessLogConfig.DEFAULT_TRACE_ID_HEADER, true)));
        HttpJson http = new HttpJson(node.httpPort());
        http.get("/health");
        Await.until("the first line", Duration.ofSeconds(10), () -> lines(log).size() == 1);
        Path rotated = dir.resolve("access.log.1");
        Files.move(log, rotated);
        assertEquals("{\"status\":\"ok\"}", http.post("/reopen_logs", "").body());
        http.get("/health");
        Await.until(
                "a line in the new file",
                Duration.ofSeconds(10),
                () -> lines(log).stream().anyMatch(l -> l.getString("path").equals("/health")));
        assertEquals(1, lines(rotated).size(), "the rotated file keeps what was written before");
        assertEquals(
                List.of("/reopen_logs", "/health"),
                lines(log).stream().map(l -> l.getString("path")).toList(),
                "the reopen request is logged once it is answered, so in the new file");
    }
}
