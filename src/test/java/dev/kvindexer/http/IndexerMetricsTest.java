package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.metrics.WarningKind;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * GET /metrics on a real node fed by a real engine socket: Dynamo's families under their exact names and types
 * (docs/operations.md#metrics), our own kvindexer_* families, and the JVM and Vert.x meters. (Replays, event_id gaps and recovery figures
 * are asserted where those happen: LosslessIngestTest, StandardEventsTest, ClusterTest.)
 */
class IndexerMetricsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    private MetricsPage metrics() {
        HttpResponse<String> r = indexer.http().get("/metrics");
        assertEquals(200, r.statusCode());
        assertEquals(
                "text/plain; version=0.0.4; charset=utf-8",
                r.headers().firstValue("content-type").orElse(""));
        return new MetricsPage(r.body());
    }

    @Test
    void dynamoFamiliesHaveTheReferenceNamesTypesAndLabels() {
        MetricsPage empty = metrics();
        assertEquals(0, empty.value("dynamo_kvindexer_models"));
        assertEquals(0, empty.value("dynamo_kvindexer_workers"));
        for (String status : List.of("pending", "active", "paused", "failed")) {
            assertEquals(0, empty.value("dynamo_kvindexer_listeners{status=\"" + status + "\"}"));
        }

        assertEquals(
                201,
                indexer.http()
                        .post(
                                "/register",
                                "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\","
                                        + "\"model_name\":\"m\",\"block_size\":4}")
                        .statusCode());
        assertEquals(404, indexer.http().get("/no-such-route").statusCode());
        assertEquals(
                422, indexer.http().post("/query", "{\"model_name\":\"m\"}").statusCode());
        MetricsPage page = metrics();

        assertEquals("histogram", page.type("dynamo_kvindexer_request_duration_seconds"));
        assertEquals("counter", page.type("dynamo_kvindexer_requests_total"));
        assertEquals("counter", page.type("dynamo_kvindexer_errors_total"));
        assertEquals("gauge", page.type("dynamo_kvindexer_models"));
        assertEquals("gauge", page.type("dynamo_kvindexer_workers"));
        assertEquals("gauge", page.type("dynamo_kvindexer_listeners"));
        assertEquals("counter", page.type("dynamo_kvrouter_kv_cache_events_applied"), "no _total suffix, as Dynamo");
        assertEquals("counter", page.type("dynamo_kvrouter_kv_cache_event_warnings"));

        assertEquals(1, page.value("dynamo_kvindexer_requests_total{endpoint=\"/register\",method=\"POST\"}"));
        assertEquals(1, page.value("dynamo_kvindexer_request_duration_seconds_count{endpoint=\"/register\"}"));
        assertEquals(
                1, page.value("dynamo_kvindexer_request_duration_seconds_bucket{endpoint=\"/register\",le=\"+Inf\"}"));
        assertTrue(
                page.has("dynamo_kvindexer_request_duration_seconds_bucket{endpoint=\"/register\",le=\"0.0001\"}"),
                "the reference's first bucket");
        assertTrue(
                page.has("dynamo_kvindexer_request_duration_seconds_bucket{endpoint=\"/register\",le=\"52.4288\"}"),
                "and its last: 0.1 ms doubled nineteen times");
        assertTrue(page.value("dynamo_kvindexer_request_duration_seconds_sum{endpoint=\"/register\"}") > 0);
        assertEquals(
                1,
                page.value("dynamo_kvindexer_errors_total{endpoint=\"unknown\",status_class=\"4xx\"}"),
                "an unmatched path is labelled unknown, never by the path a client sent");
        assertEquals(1, page.value("dynamo_kvindexer_errors_total{endpoint=\"/query\",status_class=\"4xx\"}"));
        assertFalse(page.has("dynamo_kvindexer_errors_total{endpoint=\"/register\",status_class=\"4xx\"}"));
        assertEquals(
                1,
                page.value("dynamo_kvindexer_requests_total{endpoint=\"/metrics\",method=\"GET\"}"),
                "the first scrape was counted");
        assertEquals(1, page.value("dynamo_kvindexer_models"));
        assertEquals(1, page.value("dynamo_kvindexer_workers"));
        assertEquals(
                1,
                page.value("dynamo_kvindexer_listeners{status=\"pending\"}")
                        + page.value("dynamo_kvindexer_listeners{status=\"active\"}"));
    }

    @Test
    void eventFamiliesCountAppliedRejectedGapsRestartsDecodeErrorsAndBlocks() {
        try (TestPublisher engine = new TestPublisher()) {
            assertEquals(
                    201,
                    indexer.http()
                            .post(
                                    "/register",
                                    "{\"instance_id\":1,\"endpoint\":\"" + engine.endpoint()
                                            + "\",\"model_name\":\"m\",\"block_size\":4}")
                            .statusCode());
            engine.awaitSubscriber();
            engine.publish(
                    "",
                    0,
                    LocalNode.vllmBatch(
                            new EngineEvent.Store(
                                    new long[] {1, 2}, null, new int[] {0, 1, 2, 3, 4, 5, 6, 7}, 4, "GPU", null),
                            new EngineEvent.Store(
                                    new long[] {3}, 2L, new int[] {8, 9, 10, 11}, 4, "CPU_PINNED", null)));
            Await.until("seq 0 applied", WAIT, () -> indexer.node().counters().appliedCount("stored", "ok") == 2);
            MetricsPage held = metrics();
            assertEquals("gauge", held.type("kvindexer_blocks"));
            assertEquals(2, held.value("kvindexer_blocks{model=\"m\",tenant=\"default\",tier=\"device\"}"));
            assertEquals(1, held.value("kvindexer_blocks{model=\"m\",tenant=\"default\",tier=\"host_pinned\"}"));
            assertEquals(0, held.value("kvindexer_blocks{model=\"m\",tenant=\"default\",tier=\"disk\"}"));
            assertEquals(2, held.value("kvindexer_device_tree_blocks{model=\"m\",tenant=\"default\"}"));
            assertEquals(1, held.value("dynamo_kvindexer_listeners{status=\"active\"}"));

            engine.sendFrames(new byte[0], new byte[8]); // a 2-frame message
            engine.publish("", 1, new byte[] {(byte) 0xc1, 0x00}); // an undecodable payload
            engine.publish(
                    "",
                    5,
                    LocalNode.vllmBatch(new EngineEvent.Remove(new long[] {99}, "GPU"))); // gap [1, 5), no replay
            engine.publish(
                    "",
                    0,
                    LocalNode.vllmBatch( // seq back to 0: a restarted engine
                            new EngineEvent.Store(new long[] {7}, null, new int[] {0, 1, 2, 3}, 4, "GPU", null)));
            Await.until("restart fenced", WAIT, () -> indexer.node().counters().appliedCount("stored", "ok") == 3);
            MetricsPage page = metrics();

            assertEquals(3, page.value("dynamo_kvrouter_kv_cache_events_applied{event_type=\"stored\",status=\"ok\"}"));
            assertEquals(
                    1,
                    page.value(
                            "dynamo_kvrouter_kv_cache_events_applied{event_type=\"removed\",status=\"block_not_found\"}"));
            assertEquals(1, page.value("dynamo_kvrouter_kv_cache_event_warnings{warning_kind=\"engine_restart\"}"));
            assertEquals(4, page.value("dynamo_kvrouter_kv_cache_event_warnings{warning_kind=\"batches_lost\"}"));
            assertEquals(
                    1,
                    page.value("dynamo_kvrouter_kv_cache_event_warnings{warning_kind=\"" + WarningKind.DECODE_ERROR
                            + "\"}"));

            assertEquals("counter", page.type("kvindexer_events_applied_total"));
            assertEquals(3, page.value("kvindexer_events_applied_total{event_type=\"stored\"}"));
            assertEquals(
                    1,
                    page.value("kvindexer_events_rejected_total{event_type=\"removed\",reason=\"block_not_found\"}"));
            assertEquals(1, page.value("kvindexer_gaps_total{source=\"zmq_seq\"}"));
            assertEquals(1, page.value("kvindexer_engine_restarts_fenced_total"));
            assertEquals(1, page.value("kvindexer_decode_errors_total{kind=\"frame\"}"));
            assertEquals(1, page.value("kvindexer_decode_errors_total{kind=\"batch\"}"));
            assertEquals(
                    0, page.value("kvindexer_decode_errors_total{kind=\"event\"}"), "no batch lost a single event");
            assertEquals(
                    0, page.value("kvindexer_replays_total{outcome=\"complete\"}"), "no replay endpoint, no replay");
            // The restart dropped the old process's blocks; only the new one's block is left.
            assertEquals(1, page.value("kvindexer_blocks{model=\"m\",tenant=\"default\",tier=\"device\"}"));
            assertEquals(0, page.value("kvindexer_blocks{model=\"m\",tenant=\"default\",tier=\"host_pinned\"}"));
        }
    }

    @Test
    void nodeJvmAndVertxFamilies() {
        assertEquals(200, indexer.http().get("/health").statusCode());
        MetricsPage page = metrics();
        assertEquals(1, page.value("kvindexer_cluster_members"), "a standalone node is a cluster of one");
        assertEquals(0, page.value("kvindexer_recovery_duration_seconds"));
        assertEquals(0, page.value("kvindexer_recovered_events"));
        assertEquals(0, page.value("kvindexer_recovery_exact"), "it recovered from no one");
        assertEquals(1, page.value("kvindexer_ready"));
        assertEquals(0, page.value("kvindexer_access_log_dropped_total"));
        assertEquals(0, page.value("kvindexer_access_log_write_errors_total"));
        assertEquals("counter", page.type("kvindexer_access_log_write_errors_total"));
        assertEquals("gauge", page.type("jvm_memory_used_bytes"), "JVM meters through vertx-micrometer");
        assertTrue(page.toString().contains("\njvm_threads_live_threads "), page.toString());
        assertTrue(page.toString().contains("\nvertx_pool_in_use{"), "Vert.x pool meters:\n" + page);
        // Vert.x's HTTP server meters are off (our own per-route families count requests): they kept each young
        // collection's objects alive under steady queries.
        assertTrue(!page.toString().contains("\nvertx_http_server_"), "no Vert.x HTTP server meters:\n" + page);
    }
}
