package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SelectServicePerTest.ok;
import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Advisory selection and the load signals of selection answers over real HTTP
 * (docs/api/selection.md#advisory-selection, docs/api/selection.md#load-signals). Explicit reservations set a rank's
 * active prefill tokens and decode blocks exactly, so every signal is checked on both sides of its line.
 */
class AdvisorySelectionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String PREFILL_BUSY = "DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD";
    private static final String DECODE_BUSY = "DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD";
    private static final String EVENTS_OFF = "DYN_ROUTER_USE_KV_EVENTS";

    @RegisterExtension
    final SelectServicePerTest service = new SelectServicePerTest();

    private HttpJson http;

    private void start(Map<String, String> env) throws Exception {
        http = service.start(env);
    }

    /** Worker 1 of model {@code model}, block size 4, with the capacity members given as JSON (or none). */
    private void registerWorker(String capacities) {
        JsonObject w = ok(
                201,
                http.post(
                        "/workers",
                        "{\"worker_id\":1,\"model_name\":\"model\",\"endpoint\":\"http://worker-1:8000\","
                                + "\"block_size\":4" + capacities + "}"));
        assertEquals("schedulable", w.getString("lifecycle"), w.encode());
    }

    /** Books exactly {@code prefill} prefill tokens and the given block identities on worker 1 rank 0. */
    private void book(String id, String sequenceHashes, int isl, int prefill) {
        ok(
                201,
                http.post(
                        "/reservations",
                        "{\"model_name\":\"model\",\"selection_id\":\"" + id + "\",\"worker_id\":1,"
                                + "\"sequence_hashes\":" + sequenceHashes + ",\"isl_tokens\":" + isl
                                + ",\"effective_prefill_tokens\":" + prefill + "}"));
    }

    private static String prompt(int tokens) {
        return IntStream.range(0, tokens)
                .mapToObj(i -> Integer.toString(1000 + i))
                .collect(Collectors.joining(",", "\"token_ids\":[", "]"));
    }

    private JsonObject select(String route, String members) {
        return ok(200, http.post(route, "{\"model_name\":\"model\"," + members + "}"));
    }

    private JsonObject partitionLoads() {
        return new JsonArray(http.get("/loads").body()).getJsonObject(0);
    }

    private String loads() {
        return service.worker1Loads();
    }

    @Test
    void anAdvisorySelectionIsAnsweredWhileTheQueueHoldsOrdinaryOnes() throws Exception {
        start(Map.of("DYN_ROUTER_QUEUE_THRESHOLD", "1", EVENTS_OFF, "false", PREFILL_BUSY, "1"));
        registerWorker(",\"max_num_batched_tokens\":4,\"total_kv_blocks\":10");
        book("big", "[1,2]", 8, 8);
        assertEquals("1/2/8", loads(), "8 prefill tokens: over 1 x 4, so the partition is overloaded");

        CompletableFuture<HttpResponse<String>> held = CompletableFuture.supplyAsync(
                () -> http.post("/select", "{\"model_name\":\"model\",\"selection_id\":\"held\"," + prompt(4) + "}"));
        Await.until(
                "the ordinary selection waits in the queue",
                WAIT,
                () -> partitionLoads().getInteger("pending_count") == 1);

        HttpResponse<String> advisory = http.post(
                "/select", "{\"model_name\":\"model\",\"selection_id\":\"adv\",\"advisory\":true," + prompt(4) + "}");
        assertEquals(200, advisory.statusCode(), advisory.body());
        assertTrue(
                advisory.body()
                        .contains("\"worker_load\":{\"active_prefill_tokens\":8,\"prefill_token_capacity\":4,"
                                + "\"total_kv_blocks\":10,\"prefill_busy\":true}"),
                advisory.body());
        assertFalse(held.isDone(), "the ordinary selection is still held");
        assertEquals(1, partitionLoads().getInteger("pending_count"), "the advisory one never joined the queue");
        assertEquals("1/2/8", loads(), "an advisory selection books nothing");

        CompletableFuture<HttpResponse<String>> reserveHeld = CompletableFuture.supplyAsync(() -> http.post(
                "/select_and_reserve",
                "{\"model_name\":\"model\",\"selection_id\":\"reserve\",\"advisory\":true," + prompt(4) + "}"));
        Await.until(
                "a booking waits its turn whatever its advisory member says",
                WAIT,
                () -> partitionLoads().getInteger("pending_count") == 2);

        assertEquals(
                201,
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"adv\"}")
                        .statusCode(),
                "the advisory choice was kept for a replay booking");
        assertEquals("2/3/12", loads());
        assertEquals(200, http.post("/reservations/big/prefill_complete", "").statusCode());
        assertEquals(200, http.post("/reservations/adv/prefill_complete", "").statusCode());
        JsonObject released = ok(200, held.get(10, TimeUnit.SECONDS));
        assertEquals("held", released.getString("selection_id"));
        assertFalse(released.containsKey("worker_load"), released.encode());
        JsonObject reserved = ok(200, reserveHeld.get(10, TimeUnit.SECONDS));
        assertFalse(reserved.containsKey("worker_load"), reserved.encode());
        assertEquals(0, partitionLoads().getInteger("pending_count"));
    }

    @Test
    void busySignalsAreStrictlyOverTheirLines() throws Exception {
        start(Map.of(EVENTS_OFF, "false", PREFILL_BUSY, "0.5", DECODE_BUSY, "0.5"));
        registerWorker(",\"max_num_batched_tokens\":16,\"total_kv_blocks\":8");
        book("r1", "[101,102]", 8, 8);
        assertEquals("1/2/8", loads());

        JsonObject atLines = select("/select", "\"advisory\":true," + prompt(8));
        assertEquals(4, atLines.getLong("potential_decode_blocks"), "2 active + 2 new blocks");
        assertEquals(false, atLines.getValue("decode_busy"), "4 blocks is not over 0.5 x 8");
        assertEquals(
                new JsonObject("{\"active_prefill_tokens\":8,\"prefill_token_capacity\":16,\"total_kv_blocks\":8,"
                        + "\"prefill_busy\":false}"),
                atLines.getJsonObject("worker_load"),
                "8 prefill tokens is not over 0.5 x 16");

        JsonObject partialBlock = select("/select", "\"advisory\":true," + prompt(9));
        assertEquals(5, partialBlock.getLong("potential_decode_blocks"), "the trailing partial block counts once");
        assertEquals(true, partialBlock.getValue("decode_busy"));

        book("r2", "[103]", 4, 1);
        JsonObject prefillOver = select("/select", "\"advisory\":true," + prompt(4));
        assertEquals(true, prefillOver.getJsonObject("worker_load").getValue("prefill_busy"), "9 > 8");
        assertEquals(9, prefillOver.getJsonObject("worker_load").getLong("active_prefill_tokens"));
        assertEquals(4, prefillOver.getLong("potential_decode_blocks"), "3 active + 1 new");
        assertEquals(false, prefillOver.getValue("decode_busy"), "the two signals are judged apart");

        JsonObject ordinary = select("/select", prompt(9));
        assertEquals(6, ordinary.getLong("potential_decode_blocks"));
        assertEquals(true, ordinary.getValue("decode_busy"), "every selection says whether decode is busy");
        assertFalse(ordinary.containsKey("worker_load"), "only an advisory selection reports the load");

        JsonObject booked = select("/select_and_reserve", "\"advisory\":true,\"selection_id\":\"r3\"," + prompt(4));
        assertEquals(4, booked.getLong("potential_decode_blocks"));
        assertEquals(false, booked.getValue("decode_busy"));
        assertFalse(booked.containsKey("worker_load"), "a booking is never advisory");
        assertEquals("3/4/13", loads(), "the booking took its block and 4 prefill tokens");
    }

    @Test
    void signalsWithoutTheirCapacityAreLeftOut() throws Exception {
        start(Map.of(EVENTS_OFF, "false", PREFILL_BUSY, "0", DECODE_BUSY, "0"));
        registerWorker("");

        JsonObject advisory = select("/select", "\"advisory\":true," + prompt(4));
        assertEquals(1, advisory.getLong("potential_decode_blocks"));
        assertFalse(advisory.containsKey("decode_busy"), "no total_kv_blocks: " + advisory.encode());
        assertEquals(
                new JsonObject("{\"active_prefill_tokens\":0,\"prefill_token_capacity\":10000000,"
                        + "\"prefill_busy\":false}"),
                advisory.getJsonObject("worker_load"),
                "without max_num_batched_tokens the capacity is the reference's stand-in; 0 is not over 0");

        ok(200, http.patch("/workers/1", "{\"total_kv_blocks\":8}"));
        JsonObject withCapacity = select("/select", prompt(4));
        assertEquals(true, withCapacity.getValue("decode_busy"), "1 block is over 0 x 8");
    }

    @Test
    void signalsWithoutTheirThresholdsAreLeftOut() throws Exception {
        start(Map.of(EVENTS_OFF, "false"));
        registerWorker(",\"max_num_batched_tokens\":16,\"total_kv_blocks\":8");
        book("r1", "[101]", 4, 4);

        JsonObject advisory = select("/select", "\"advisory\":true," + prompt(4));
        assertFalse(advisory.containsKey("decode_busy"), advisory.encode());
        assertEquals(
                new JsonObject("{\"active_prefill_tokens\":4,\"prefill_token_capacity\":16,\"total_kv_blocks\":8}"),
                advisory.getJsonObject("worker_load"));
        JsonObject ordinary = select("/select", "\"advisory\":false," + prompt(4));
        assertEquals(2, ordinary.getLong("potential_decode_blocks"));
        assertFalse(ordinary.containsKey("decode_busy"), ordinary.encode());
        assertFalse(ordinary.containsKey("worker_load"), ordinary.encode());
    }

    @Test
    void aNonBooleanAdvisoryIsRefusedAndChangesNothing() throws Exception {
        start(Map.of(EVENTS_OFF, "false", PREFILL_BUSY, "0.5", DECODE_BUSY, "0.5"));
        assertError(
                422,
                "`advisory`: invalid type, expected a boolean",
                http.post("/select", "{\"model_name\":\"model\",\"advisory\":\"yes\"," + prompt(4) + "}"));
        registerWorker(",\"max_num_batched_tokens\":16,\"total_kv_blocks\":8");

        for (String bad : new String[] {"\"true\"", "1", "[true]", "{}"}) {
            assertError(
                    422,
                    "`advisory`: invalid type, expected a boolean",
                    http.post(
                            "/select",
                            "{\"model_name\":\"model\",\"selection_id\":\"bad\",\"advisory\":" + bad + "," + prompt(4)
                                    + "}"));
        }
        assertError(
                404,
                "no pending selection bad",
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"bad\"}"));
        assertEquals("0/0/0", loads(), "a refused selection books nothing");

        JsonObject absent = select("/select", "\"advisory\":null," + prompt(4));
        assertFalse(absent.containsKey("worker_load"), "null is the same as absent");
        JsonObject ignored = select("/select_and_reserve", "\"advisory\":\"yes\",\"selection_id\":\"b1\"," + prompt(4));
        assertEquals("b1", ignored.getString("selection_id"), "a booking does not read the member");
        assertEquals("1/1/4", loads());
    }
}
