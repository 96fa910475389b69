package dev.kvindexer.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.IndexMemory;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.SelectServiceLimitsConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.partition.MemoryBudget;
import dev.kvindexer.select.SelectionConfig;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Thousands of seeded random registrations, unregistrations and worker changes against one node, its indexer port
 * and its selection service at once, with ranks, rank counts and models chosen to cross every limit: no answer is a
 * 5xx, every refusal is a 4xx with an error text, the partitions never outgrow what the memory budget holds, and
 * once everything is taken away the node is as empty as it started.
 */
class RegistrationStormTest {
    private static final int OPERATIONS = 3_000;
    private static final long BUDGET = 8L << 20;
    private static final long[] RANKS = {0, 1, 2, 3, 65_535, 65_536, 2_147_483_648L, 4_294_967_295L};
    private static final long[] SIZES = {0, 1, 2, 4, 64, 4_097, 4_294_967_295L};

    @Test
    void randomRegistrationsCrossingEveryLimitNeverBreakTheNode() throws Exception {
        IndexerNode node = IndexerNode.start(ServeConfig.local(0).withIndexMemory(new IndexMemory(BUDGET)));
        try {
            HttpJson indexer = new HttpJson(node.httpPort());
            HttpJson select = new HttpJson(SelectServiceCommand.deploy(
                            node,
                            SelectServiceConfig.on("127.0.0.1", 0)
                                    .withLimits(new SelectServiceLimitsConfig(64, 1024, 65_536)),
                            SelectionConfig.fromEnvironment(Map.of()))
                    .actualPort());
            long maxPartitions = (long) (BUDGET / 2 / MemoryBudget.PARTITION_FIXED_BYTES);
            SplittableRandom rnd = new SplittableRandom(0x73746f726dL);
            int refused = 0;
            for (int i = 0; i < OPERATIONS; i++) {
                String model = "model-" + rnd.nextInt(3 * (int) maxPartitions);
                long id = 1 + rnd.nextInt(200);
                HttpResponse<String> r = switch (rnd.nextInt(5)) {
                    case 0, 1 ->
                        indexer.post(
                                "/register",
                                new JsonObject()
                                        .put("instance_id", id)
                                        .put("dp_rank", RANKS[rnd.nextInt(RANKS.length)])
                                        .put("endpoint", "tcp://127.0.0.1:9")
                                        .put("model_name", model)
                                        .put("block_size", 4)
                                        .encode());
                    case 2 ->
                        indexer.post(
                                "/unregister",
                                new JsonObject()
                                        .put("instance_id", id)
                                        .put("model_name", model)
                                        .encode());
                    case 3 -> select.post("/workers", worker(rnd, 10_000 + id % 50, model));
                    default -> select.send("DELETE", "/workers/" + (10_000 + id % 50));
                };
                assertTrue(r.statusCode() < 500, "operation " + i + ": " + r.statusCode() + " " + r.body());
                if (r.statusCode() >= 400) {
                    refused++;
                    assertTrue(new JsonObject(r.body()).getString("error", "").length() > 0, r.body());
                }
                if (i % 250 == 0) {
                    assertTrue(
                            models(indexer).size() <= maxPartitions,
                            "partitions: " + models(indexer).size());
                    assertEquals(200, indexer.get("/health").statusCode());
                }
            }
            assertTrue(refused > OPERATIONS / 10, refused + " refused");
            // Everything taken away: the node is as empty as it started.
            for (long id = 10_000; id < 10_050; id++) {
                select.send("DELETE", "/workers/" + id);
            }
            JsonArray workers = new JsonArray(indexer.get("/workers").body());
            for (int i = 0; i < workers.size(); i++) {
                JsonObject w = workers.getJsonObject(i);
                assertEquals(
                        200,
                        indexer.post(
                                        "/unregister",
                                        new JsonObject()
                                                .put("instance_id", w.getValue("instance_id"))
                                                .put("model_name", w.getString("model_name"))
                                                .put("routing_group", w.getString("routing_group"))
                                                .encode())
                                .statusCode(),
                        w.encode());
            }
            assertEquals("[]", indexer.get("/workers").body());
            assertEquals("{}", indexer.get("/dump").body());
            assertEquals(0, (long) MetricsPage.of(indexer).value("kvindexer_index_memory_used_bytes"));
        } finally {
            node.close();
        }
    }

    private static String worker(SplittableRandom rnd, long id, String model) {
        long size = SIZES[rnd.nextInt(SIZES.length)];
        JsonObject endpoints = new JsonObject();
        for (long r = 0; r < Math.min(size, 64); r++) {
            endpoints.put(Long.toString(r), "tcp://127.0.0.1:" + (10 + r));
        }
        return new JsonObject()
                .put("worker_id", id)
                .put("model_name", model)
                .put("endpoint", "http://w")
                .put("block_size", 4)
                .put("data_parallel_start_rank", RANKS[rnd.nextInt(RANKS.length)] % 70_000)
                .put("data_parallel_size", size)
                .put("kv_events_endpoints", endpoints)
                .encode();
    }

    private static Set<String> models(HttpJson indexer) {
        Set<String> out = new HashSet<>();
        JsonArray workers = new JsonArray(indexer.get("/workers").body());
        for (int i = 0; i < workers.size(); i++) {
            out.add(workers.getJsonObject(i).getString("model_name"));
        }
        return out;
    }
}
