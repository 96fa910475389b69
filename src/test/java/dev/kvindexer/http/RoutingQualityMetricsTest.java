package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Whether routing finds anything, as /metrics and /overview show it: per partition the matched fraction of each query
 * (all query routes of both flavors), queries nothing matched, instances matching; per engine rank blocks held,
 * stored and removed, events, and the age of its last event.
 */
class RoutingQualityMetricsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String P = "model=\"m\",tenant=\"default\"";

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    private static int[] range(int from, int to) {
        int[] out = new int[to - from];
        for (int i = 0; i < out.length; i++) {
            out[i] = from + i;
        }
        return out;
    }

    private void query(String path, String body) {
        assertEquals(200, indexer.http().post(path, body).statusCode(), path + " " + body);
    }

    @Test
    void everyQueryRouteFeedsThePartitionsMatchHistogramsAndEveryEngineItsActivity() {
        try (TestPublisher one = new TestPublisher();
                TestPublisher two = new TestPublisher()) {
            assertEquals(
                    201,
                    indexer.http()
                            .post(
                                    "/register",
                                    "{\"instance_id\":1,\"endpoint\":\"" + one.endpoint()
                                            + "\",\"model_name\":\"m\",\"block_size\":4}")
                            .statusCode());
            assertEquals(
                    201,
                    indexer.http()
                            .post(
                                    "/register",
                                    "{\"instance_id\":2,\"endpoint\":\"" + two.endpoint()
                                            + "\",\"model_name\":\"m\",\"block_size\":4}")
                            .statusCode());
            one.awaitSubscriber();
            two.awaitSubscriber();
            one.publish(
                    "",
                    0,
                    LocalNode.vllmBatch(
                            new EngineEvent.Store(new long[] {1, 2}, null, range(0, 8), 4, "GPU", null),
                            new EngineEvent.Store(new long[] {3}, 2L, range(8, 12), 4, "CPU_PINNED", null)));
            two.publish(
                    "",
                    0,
                    LocalNode.vllmBatch(new EngineEvent.Store(new long[] {9}, null, range(0, 4), 4, "GPU", null)));
            Await.until(
                    "both engines' blocks applied",
                    WAIT,
                    () -> indexer.node().counters().appliedCount("stored", "ok") == 3);

            // Engine 1 holds 12 tokens (8 on GPU, 4 more on CPU), engine 2 the first 4.
            query("/query", "{\"model_name\":\"m\",\"token_ids\":" + json(range(0, 12)) + "}");
            query("/query", "{\"model_name\":\"m\",\"token_ids\":" + json(range(0, 16)) + "}");
            query("/query", "{\"model\":\"m\",\"token_ids\":" + json(range(100, 108)) + "}");
            long[] hashes = BlockHasher.localHashes(range(0, 8), 4, BlockHasher.seedFor(null, null));
            query(
                    "/query_tiered_by_hash",
                    "{\"model_name\":\"m\",\"block_hashes\":[" + hashes[0] + "," + hashes[1] + "]}");
            query("/query", "{\"model_name\":\"m\",\"token_ids\":[0,1,2]}"); // shorter than a block: not counted

            one.publish("", 1, LocalNode.vllmBatch(new EngineEvent.Remove(new long[] {2, 404}, "GPU")));
            Await.until(
                    "the remove applied",
                    WAIT,
                    () -> indexer.node().counters().appliedCount("removed", "block_not_found") == 1);
            // Engine 2's publisher also speaks for its dp_rank 3, which has no listener of its own.
            two.publish(
                    "",
                    1,
                    BatchEncoder.batch(
                            BatchEncoder.Format.VLLM_MAP,
                            1.0,
                            List.of(new EngineEvent.Store(new long[] {31}, null, range(200, 204), 4, "GPU", null)),
                            3));
            Await.until(
                    "rank 3's block applied",
                    WAIT,
                    () -> indexer.node().counters().appliedCount("stored", "ok") == 4);
            MetricsPage page = MetricsPage.of(indexer.http());

            assertEquals("histogram", page.type("kvindexer_query_match_ratio"));
            assertEquals(4, page.value("kvindexer_query_match_ratio_count{" + P + "}"));
            assertEquals(2.75, page.value("kvindexer_query_match_ratio_sum{" + P + "}"), 1e-9, "1 + 0.75 + 0 + 1");
            assertEquals(1, page.value("kvindexer_query_match_ratio_bucket{" + P + ",le=\"0\"}"));
            assertEquals(1, page.value("kvindexer_query_match_ratio_bucket{" + P + ",le=\"0.7\"}"));
            assertEquals(2, page.value("kvindexer_query_match_ratio_bucket{" + P + ",le=\"0.8\"}"));
            assertEquals(4, page.value("kvindexer_query_match_ratio_bucket{" + P + ",le=\"1\"}"));
            assertEquals(4, page.value("kvindexer_query_match_ratio_bucket{" + P + ",le=\"+Inf\"}"));
            assertEquals("counter", page.type("kvindexer_query_zero_match_total"));
            assertEquals(1, page.value("kvindexer_query_zero_match_total{" + P + "}"), "the Mooncake miss");
            assertEquals(1, page.value("kvindexer_query_matching_instances_bucket{" + P + ",le=\"0\"}"));
            assertEquals(1, page.value("kvindexer_query_matching_instances_bucket{" + P + ",le=\"1\"}"));
            assertEquals(4, page.value("kvindexer_query_matching_instances_bucket{" + P + ",le=\"2\"}"));
            assertEquals(6, page.value("kvindexer_query_matching_instances_sum{" + P + "}"));

            String e1 = P + ",worker_id=\"1\",dp_rank=\"0\"";
            assertEquals(1, page.value("kvindexer_engine_blocks{" + e1 + ",tier=\"device\"}"));
            assertEquals(1, page.value("kvindexer_engine_blocks{" + e1 + ",tier=\"host_pinned\"}"));
            assertEquals(3, page.value("kvindexer_engine_blocks_stored_total{" + e1 + "}"));
            assertEquals(1, page.value("kvindexer_engine_blocks_removed_total{" + e1 + "}"));
            assertEquals(3, page.value("kvindexer_engine_events_total{" + e1 + "}"));
            assertEquals(
                    1, page.value("kvindexer_engine_blocks_stored_total{" + P + ",worker_id=\"2\",dp_rank=\"0\"}"));
            double age = page.value("kvindexer_engine_last_event_age_seconds{" + e1 + "}");
            assertTrue(age >= 0 && age < WAIT.toSeconds(), "engine 1 spoke during this test: " + age);
            assertTrue(page.value("kvindexer_partition_memory_bytes{" + P + "}") > 0);

            JsonObject overview = new JsonObject(indexer.http().get("/overview").body());
            JsonObject partition = overview.getJsonArray("partitions").getJsonObject(0);
            assertEquals(4, partition.getLong("queries"));
            assertEquals(1, partition.getLong("zero_match_queries"));
            assertEquals(2.75 / 4, partition.getDouble("mean_match_ratio"), 1e-9);
            assertEquals(3, partition.getInteger("engines"), "ranks 1/0, 2/0 and the batch-named 2/3");
            JsonObject worker = overview.getJsonArray("workers").getJsonObject(0);
            assertEquals("1", worker.getString("instance_id"), "ids as strings: a browser cannot hold every u64");
            JsonObject rank = worker.getJsonArray("ranks").getJsonObject(0);
            assertEquals("active", rank.getString("status"));
            assertEquals(3, rank.getLong("stored_blocks"));
            assertEquals(1, rank.getJsonObject("blocks").getLong("host_pinned"));
            assertTrue(overview.getJsonObject("node").getBoolean("ready"));
            assertTrue(overview.getJsonObject("totals").getLong("queries") >= 5, "every query request is counted");
            assertEquals(
                    5,
                    overview.getJsonObject("totals").getLong("events_applied"),
                    "4 stored, 1 removed (one of its two hashes was unknown)");
            JsonArray ranksOfTwo =
                    overview.getJsonArray("workers").getJsonObject(1).getJsonArray("ranks");
            assertEquals(2, ranksOfTwo.size(), ranksOfTwo.encode());
            JsonObject named = ranksOfTwo.getJsonObject(1);
            assertEquals(3, named.getInteger("dp_rank"));
            assertEquals(false, named.getBoolean("listener"), "a rank only its batches name");
            assertEquals(1, named.getLong("stored_blocks"));
            assertEquals(
                    1,
                    MetricsPage.of(indexer.http())
                            .value("kvindexer_engine_blocks_stored_total{" + P + ",worker_id=\"2\",dp_rank=\"3\"}"));
        }
    }

    private static JsonArray json(int[] values) {
        return new JsonArray(Arrays.stream(values).boxed().toList());
    }
}
