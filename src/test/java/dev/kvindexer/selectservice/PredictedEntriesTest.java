package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SelectServicePerTest.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Predicted entries over real HTTP, beside engines that publish over real ZMQ (docs/api/selection.md#predicted-entries):
 * a booking predicts its blocks on its rank until the TTL, merged into device overlaps by the longer, and is then
 * checked against what the engine reported.
 */
class PredictedEntriesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** Four blocks of four tokens. */
    private static final int[] PROMPT = IntStream.rangeClosed(1, 16).toArray();

    private static final String ENTRIES = "kvindexer_select_predicted_entries";
    private static final String CONFIRMED = "kvindexer_select_predicted_blocks_total{outcome=\"confirmed\"}";
    private static final String UNCONFIRMED = "kvindexer_select_predicted_blocks_total{outcome=\"unconfirmed\"}";

    @RegisterExtension
    final SelectServicePerTest service = new SelectServicePerTest();

    private HttpJson http;

    @Test
    void aBookingIsPredictedOnItsRankAndDrawsTheNextSelectionOfItsPrefix() throws Exception {
        http = service.start(Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "600"));
        try (TestPublisher w1 = new TestPublisher();
                TestPublisher w2 = new TestPublisher()) {
            register(1, w1);
            register(2, w2);
            assertEquals("1/0:0/0 2/0:0/0", scores(PROMPT));

            ok(200, http.post("/select", request("query-only", PROMPT, 1).encode()));
            assertEquals("1/0:0/0 2/0:0/0", scores(PROMPT), "a query-only selection predicts nothing");

            ok(200, http.post("/select_and_reserve", request("first", PROMPT, 1).encode()));
            assertEquals("1/0:4/4 2/0:0/0", scores(PROMPT), "worker 1 is predicted to hold the whole prompt");
            int[] sibling = PROMPT.clone();
            sibling[13] = 99;
            assertEquals("1/0:3/3 2/0:0/0", scores(sibling), "a prompt that leaves it in block 4 shares three");
            assertEquals(4, metrics().value(ENTRIES));

            // Worker 1 costs 1 prefill block and 5 decode blocks against worker 2's 4 and 4; without the prediction its
            // prefill would be 4 blocks and worker 2 would win.
            assertEquals(
                    200, http.post("/reservations/first/prefill_complete", "").statusCode());
            JsonObject next = ok(
                    200,
                    http.post(
                            "/select_and_reserve",
                            request("sibling", sibling, 0).encode()));
            assertEquals(1, next.getLong("worker_id"), next.encode());
            assertEquals(12, next.getJsonObject("overlap").getInteger("gpu"), "three blocks of four tokens");

            JsonObject toWorker2 = ok(
                    200,
                    http.post("/select_and_reserve", request("to-2", PROMPT, 2).encode()));
            assertFalse(
                    toWorker2.containsKey("kv_hint"),
                    "predicted blocks are bookings, not blocks an engine holds: no hint names them");
            double before = metrics().value(ENTRIES);
            assertEquals(
                    201,
                    http.post(
                                    "/reservations",
                                    "{\"model_name\":\"model\",\"selection_id\":\"hashes\",\"worker_id\":2,"
                                            + "\"sequence_hashes\":[5,6,7],\"isl_tokens\":12}")
                            .statusCode());
            assertEquals(before, metrics().value(ENTRIES), "a booking by sequence hashes alone predicts nothing");

            assertEquals(200, http.send("DELETE", "/workers/1").statusCode());
            assertEquals("2/0:4/4", scores(PROMPT), "a worker that leaves takes its predictions along");
        }
    }

    /** The engine reports two of the four blocks before the booking's prediction ends: two confirmed, two not. */
    @Test
    void anEndedPredictionIsCheckedAgainstWhatTheEngineReported() throws Exception {
        http = service.start(Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "0.2"));
        try (TestPublisher w1 = new TestPublisher()) {
            register(1, w1);
            w1.awaitSubscriber();
            w1.publish(
                    "",
                    0,
                    BatchEncoder.batch(
                            BatchEncoder.Format.VLLM_MAP,
                            1.0,
                            List.of(new EngineEvent.Store(
                                    new long[] {71, 72}, null, Arrays.copyOf(PROMPT, 8), 4, "GPU", null)),
                            0));
            Await.equal("the engine's two blocks are indexed", WAIT, "1/0:2/0", () -> scores(PROMPT));

            ok(
                    200,
                    http.post(
                            "/select_and_reserve", request("booked", PROMPT, 1).encode()));
            Await.until(
                    "the prediction ended and was checked",
                    WAIT,
                    () -> metrics().has(CONFIRMED)
                            && metrics().value(CONFIRMED) + metrics().valueOrZero(UNCONFIRMED) == 4);
            MetricsPage page = metrics();
            assertEquals(2, page.value(CONFIRMED));
            assertEquals(2, page.value(UNCONFIRMED));
            assertEquals(0, page.value(ENTRIES));
            assertEquals("1/0:2/0", scores(PROMPT), "what is left is what the engine reported");
            assertEquals(
                    new JsonObject()
                            .put("entries", 0)
                            .put("confirmed_blocks", 2)
                            .put("unconfirmed_blocks", 2)
                            .put("evicted", 0),
                    new JsonObject(service.node().get("/overview").body())
                            .getJsonObject("selection")
                            .getJsonObject("predicted"),
                    "the node's dashboard shows the same");
        }
    }

    @Test
    void withoutTheSettingNothingIsPredictedAndScoresKeepDynamosShape() throws Exception {
        http = service.start(Map.of());
        try (TestPublisher w1 = new TestPublisher()) {
            register(1, w1);
            ok(200, http.post("/select_and_reserve", request("first", PROMPT, 1).encode()));
            assertEquals(
                    "1/0:0/null",
                    scores(PROMPT),
                    "the booking left no trace in the device figure, and no row has predicted_blocks");
            assertEquals(0, metrics().value(ENTRIES));
        }
    }

    private void register(long id, TestPublisher engine) {
        JsonObject worker = new JsonObject()
                .put("worker_id", id)
                .put("model_name", "model")
                .put("endpoint", "http://w" + id)
                .put("block_size", 4)
                .put("kv_events_endpoint", engine.endpoint());
        assertEquals(
                "schedulable", ok(201, http.post("/workers", worker.encode())).getString("lifecycle"));
    }

    /** A selection of {@code tokens}, pinned to worker {@code pinned} (0: the service chooses). */
    private static JsonObject request(String selectionId, int[] tokens, long pinned) {
        JsonObject r = new JsonObject()
                .put("model_name", "model")
                .put("selection_id", selectionId)
                .put("token_ids", new JsonArray(Arrays.stream(tokens).boxed().toList()));
        return pinned == 0
                ? r
                : r.put(
                        "pinned_worker",
                        new JsonObject().put("worker_id", pinned).put("dp_rank", 0));
    }

    /** Each rank's device blocks and predicted blocks: "worker/rank:device/predicted ...". */
    private String scores(int[] tokens) {
        return SelectServicePerTest.overlapRows(http, tokens, "device_blocks", "predicted_blocks");
    }

    private MetricsPage metrics() {
        return MetricsPage.of(http);
    }
}
