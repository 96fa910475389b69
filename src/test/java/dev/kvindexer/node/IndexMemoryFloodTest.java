package dev.kvindexer.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChaosReport;
import dev.kvindexer.support.ChildNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node in a JVM of its own with a small heap and a smaller index budget, fed distinct blocks over ZMQ until it has
 * stored several times what the budget holds: it stays up, keeps its indexes within the budget, still answers a
 * query for what was stored last, and its resident memory stops growing once the budget is reached.
 */
class IndexMemoryFloodTest {
    private static final int BLOCK = 4;
    private static final int BLOCKS_PER_BATCH = 64;
    private static final int BATCHES_PER_ROUND = 2_000;
    /** Scaled down to stay fast in the build; {@code -Dkvindexer.flood.*} runs the full-size case (BENCHMARKS.md). */
    private static final String HEAP = System.getProperty("kvindexer.flood.heap", "160m");

    private static final String BUDGET = System.getProperty("kvindexer.flood.budget", "24m");
    private static final long BLOCKS = Long.getLong("kvindexer.flood.blocks", 0);
    private static final String USED = "kvindexer_index_memory_used_bytes";
    private static final String BUDGET_LINE = "kvindexer_index_memory_budget_bytes";
    private static final String EVICTED = "kvindexer_index_evicted_blocks_total";
    private static final String STORED = "kvindexer_events_applied_total{event_type=\"stored\"}";

    private ChildNode node;

    @TempDir
    Path logs;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void aFloodOfDistinctBlocksKeepsTheNodeWithinItsBudget() throws Exception {
        // The heap committed and touched up front, as a server is run: resident memory then shows what grows beside
        // it, and the index cannot hide behind a heap still growing towards its maximum.
        node = ChildNode.start(
                logs,
                "flood",
                List.of("-Xms" + HEAP, "-Xmx" + HEAP, "-XX:+AlwaysPreTouch"),
                List.of("--max-index-memory", BUDGET, "--threads", "2", "--ingest-threads", "1"));
        HttpJson http = new HttpJson(node.awaitReady(ChildNode.START_PATIENCE));
        try (TestPublisher pub = new TestPublisher(0)) {
            JsonObject reg = new JsonObject()
                    .put("instance_id", 1)
                    .put("endpoint", pub.endpoint())
                    .put("model_name", "m")
                    .put("block_size", BLOCK);
            assertEquals(201, http.post("/register", reg.encode()).statusCode());
            pub.awaitSubscriber();

            SplittableRandom rnd = new SplittableRandom(11);
            long seq = 0;
            int[] lastTokens = null;
            List<Long> rss = new ArrayList<>(); // after each round over the budget
            int roundsOverBudget = 0;
            long budget = 0;
            for (int round = 0;
                    BLOCKS > 0 ? seq * BLOCKS_PER_BATCH < BLOCKS : round < 40 && roundsOverBudget < 12;
                    round++) {
                for (int b = 0; b < BATCHES_PER_ROUND; b++) {
                    long[] hashes = rnd.longs(BLOCKS_PER_BATCH).toArray();
                    lastTokens = rnd.ints(BLOCKS_PER_BATCH * BLOCK, 0, 50_000).toArray();
                    byte[] batch = BatchEncoder.batch(
                            BatchEncoder.Format.VLLM_MAP,
                            1.0,
                            List.of(new EngineEvent.Store(hashes, null, lastTokens, BLOCK, null, null)),
                            0);
                    pub.publish("", seq++, batch);
                }
                long sent = seq;
                Await.until(
                        "the node to apply round " + round,
                        Duration.ofSeconds(60),
                        () -> figure(MetricsPage.of(http), STORED) >= sent);
                MetricsPage m = MetricsPage.of(http);
                long used = figure(m, USED);
                budget = figure(m, BUDGET_LINE);
                assertTrue(
                        budget > 0 && used <= budget, "round " + round + ": " + used + " bytes held, budget " + budget);
                if (figure(m, EVICTED) > 0) {
                    roundsOverBudget++;
                    long bytes = ChaosReport.rssBytes(node.pid());
                    assertTrue(bytes > 0, "the node's VmRSS is readable");
                    rss.add(bytes);
                }
            }
            MetricsPage m = MetricsPage.of(http);
            long stored = seq * BLOCKS_PER_BATCH;
            long evicted = figure(m, EVICTED);
            assertTrue(roundsOverBudget >= 12, "the flood went well past the budget");
            assertTrue(evicted > stored / 2, "most of the " + stored + " blocks were evicted: " + evicted);
            System.out.printf(
                    "flood: %,d blocks stored, %,d evicted, %,d bytes held of %,d; RSS over the rounds past "
                            + "the budget (MB): %s%n",
                    stored,
                    evicted,
                    figure(m, USED),
                    budget,
                    rss.stream().map(b -> String.valueOf(b >> 20)).toList());
            // Over the second half of the rounds past the budget, resident memory no longer grows.
            long mid = rss.get(rss.size() / 2);
            long last = rss.get(rss.size() - 1);
            assertTrue(last < mid + 32L * 1024 * 1024, "resident memory flat past the budget: " + rss);

            // What was stored last is held whole, and the node answers a query for it.
            JsonObject query = new JsonObject()
                    .put("model_name", "m")
                    .put(
                            "token_ids",
                            new JsonArray(Arrays.stream(lastTokens).boxed().toList()));
            long[] micros = new long[400];
            HttpResponse<String> r = null;
            for (int i = -200; i < micros.length; i++) { // the first 200 warm the query path up
                long t0 = System.nanoTime();
                r = http.post("/query", query.encode());
                if (i >= 0) {
                    micros[i] = (System.nanoTime() - t0) / 1000;
                }
            }
            Arrays.sort(micros);
            System.out.printf(
                    "flood: /query of %d tokens over HTTP, one at a time: p50 %d us, p99 %d us%n",
                    lastTokens.length, micros[200], micros[396]);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(
                    BLOCKS_PER_BATCH * BLOCK,
                    new JsonObject(r.body())
                            .getJsonObject("scores")
                            .getJsonObject("1")
                            .getInteger("0"),
                    "matched tokens");

            // The whole index as JSON, several times the budget as text: the node streams it from a compact snapshot.
            long held =
                    figure(MetricsPage.of(http), "kvindexer_blocks{model=\"m\",tenant=\"default\",tier=\"device\"}");
            HttpResponse<String> dump = http.get("/dump");
            assertEquals(200, dump.statusCode());
            long events = dump.body().split("\"block_hash\":", -1).length - 1;
            System.out.printf(
                    "flood: /dump of %,d blocks is %,d bytes of JSON%n",
                    events, dump.body().length());
            assertEquals(held, events, "every held block is in the dump");
            assertTrue(
                    dump.body().length() > 2 * budget,
                    "the text is larger than the budget: " + dump.body().length());
            assertEquals(200, http.get("/health").statusCode(), "the node is still up");
        }
    }

    /**
     * Thousands of registrations, each of a model of its own, on a small heap: every partition's fixed cost counts in
     * the budget, and once those fixed costs would take half of it a new partition is refused with 429 and a clear
     * text, while the node stays up and within its budget.
     */
    @Test
    void aFloodOfPartitionsIsRefusedOnceTheBudgetCannotHoldThem() throws Exception {
        node = ChildNode.start(
                logs,
                "partitions",
                List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError"),
                List.of("--max-index-memory", "64m", "--threads", "2", "--ingest-threads", "1"));
        HttpJson http = new HttpJson(node.awaitReady(ChildNode.START_PATIENCE));
        int accepted = 0;
        int refused = 0;
        String refusal = null;
        for (int i = 0; i < 2_000; i++) {
            HttpResponse<String> r = http.post(
                    "/register",
                    new JsonObject()
                            .put("instance_id", i + 1)
                            .put("endpoint", "tcp://127.0.0.1:9")
                            .put("model_name", "model-" + i)
                            .put("block_size", BLOCK)
                            .encode());
            if (r.statusCode() == 201) {
                accepted++;
            } else {
                assertEquals(429, r.statusCode(), r.body());
                refused++;
                refusal = new JsonObject(r.body()).getString("error");
            }
        }
        assertTrue(accepted > 100 && refused > 1_000, accepted + " accepted, " + refused + " refused");
        assertTrue(refusal.contains("--max-index-memory"), refusal);
        MetricsPage m = MetricsPage.of(http);
        long used = figure(m, USED);
        long budget = figure(m, BUDGET_LINE);
        assertTrue(used >= accepted * 100_000L && used <= budget / 2, used + " bytes held of " + budget);
        assertEquals(accepted, new JsonArray(http.get("/workers").body()).size());
        assertEquals(200, http.get("/health").statusCode());
        // A model that has a partition still takes workers.
        assertEquals(
                201,
                http.post(
                                "/register",
                                new JsonObject()
                                        .put("instance_id", 100_000)
                                        .put("endpoint", "tcp://127.0.0.1:9")
                                        .put("model_name", "model-0")
                                        .put("block_size", BLOCK)
                                        .encode())
                        .statusCode());
    }

    /** A sample of the page; 0 while a counter has none yet (no stored event applied). */
    private static long figure(MetricsPage page, String series) {
        return page.has(series) ? (long) page.value(series) : 0;
    }
}
