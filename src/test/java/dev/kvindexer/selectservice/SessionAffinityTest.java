package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SelectServicePerTest.ok;
import static dev.kvindexer.support.JsonErrors.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Session affinity over real HTTP (docs/api/selection.md#session-affinity): {@code select_and_reserve} and replayed
 * reservations bind a session to the rank they book, later requests of the session go there whatever the load,
 * {@code /select} follows a binding and never makes one, explicit targets win, and the binding outlives its last
 * reservation by the TTL. Two workers of one partition; heavy explicit bookings make the load point away from the
 * bound worker, so a request that still lands there was steered.
 */
class SessionAffinityTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final String PROMPT = "\"token_ids\":[1,2,3,4,5,6,7,8]";

    @RegisterExtension
    final SelectServicePerTest services = new SelectServicePerTest();

    private SelectServiceFixture service;
    private HttpJson http;

    /** A service with session affinity of {@code ttlSecs} (0: off) and workers 1 and 2 of model {@code model}. */
    private void start(long ttlSecs) throws Exception {
        service = services.start(
                Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"),
                SelectServiceConfig.on("127.0.0.1", 0).withSessionAffinityTtlSecs(ttlSecs));
        http = service.http;
        for (int w = 1; w <= 2; w++) {
            SelectServiceFixture.registerWorker(http, w);
        }
    }

    private HttpResponse<String> call(String route, String members) {
        return http.post(route, "{\"model_name\":\"model\"," + PROMPT + (members.isEmpty() ? "" : ",") + members + "}");
    }

    private long worker(String route, String members) {
        return SessionRequests.worker(http, route, members);
    }

    private void load(long worker, String id, int blocks) {
        SessionRequests.load(http, worker, id, blocks);
    }

    /** Starts with a TTL of an hour and books session {@code s} under {@code a1}; the worker it was bound to. */
    private long startBound() throws Exception {
        start(3600);
        return worker("/select_and_reserve", "\"selection_id\":\"a1\",\"session_id\":\"s\"");
    }

    @Test
    void aBookingBindsItsSessionAndLaterRequestsFollowItWhateverTheLoad() throws Exception {
        long bound = startBound();
        long other = 3 - bound;
        load(bound, "heavy", 64);
        assertEquals(other, worker("/select_and_reserve", "\"selection_id\":\"plain\""), "no session: the load");
        assertEquals(bound, worker("/select_and_reserve", "\"selection_id\":\"a2\",\"session_id\":\"s\""));
        assertEquals(bound, worker("/select", "\"session_id\":\"s\""));
        assertEquals(bound, worker("/select", "\"session_context\":{\"session_id\":\"s\"}"));
        assertEquals(
                other,
                worker("/select", "\"session_id\":\"s\",\"session_context\":{\"session_id\":\"u\"}"),
                "the session_context object wins over the flat session_id");

        assertEquals(other, worker("/select", "\"session_id\":\"fresh\""));
        load(other, "heavier", 128);
        assertEquals(bound, worker("/select", "\"session_id\":\"fresh\""), "/select bound nothing");
    }

    @Test
    void anExplicitTargetOrPinWinsAndLeavesTheBindingAlone() throws Exception {
        long bound = startBound();
        long other = 3 - bound;
        String s = "\"session_id\":\"s\",";
        assertEquals(other, worker("/select_and_reserve", s + "\"pinned_worker\":{\"worker_id\":" + other + "}"));
        assertEquals(other, worker("/select_and_reserve", s + "\"affinity_target\":{\"worker_id\":" + other + "}"));
        assertEquals(
                other, worker("/select", s + "\"affinity_target\":{\"worker_id\":" + other + ",\"dp_rank\":null}"));
        load(other, "heavy", 64);
        assertEquals(other, worker("/select", "\"affinity_target\":{\"worker_id\":" + other + ",\"dp_rank\":0}"));
        assertEquals(bound, worker("/select_and_reserve", "\"session_id\":\"s\""), "still bound where it was");
    }

    @Test
    void aBindingLastsWhileItsReservationsLiveAndForTheTtlAfter() throws Exception {
        start(1);
        long bound = worker("/select_and_reserve", "\"selection_id\":\"a1\",\"session_id\":\"s\"");
        long other = 3 - bound;
        load(bound, "heavy", 64);
        // A second session on the same worker, whose reservation ends at once, is the test's clock.
        assertEquals(
                bound,
                worker(
                        "/select_and_reserve",
                        "\"selection_id\":\"b1\",\"session_id\":\"t\",\"allowed_worker_ids\":[" + bound + "]"));
        assertEquals(bound, worker("/select", "\"session_id\":\"t\""));
        assertEquals(200, http.send("DELETE", "/reservations/b1").statusCode());
        Await.until("t's binding idles out a TTL after its reservation ended", WAIT, () -> {
            return worker("/select", "\"session_id\":\"t\"") == other;
        });
        assertEquals(bound, worker("/select", "\"session_id\":\"s\""), "s is still leased by a1");

        assertEquals(200, http.send("DELETE", "/reservations/a1").statusCode());
        Await.until("s idles out once a1 ended", WAIT, () -> worker("/select", "\"session_id\":\"s\"") == other);
        assertEquals(other, worker("/select_and_reserve", "\"session_id\":\"s\""), "and is bound anew by load");
    }

    @Test
    void badSessionMembersAreRefusedAndChangeNothing() throws Exception {
        start(3600);
        String before = http.get("/loads").body();
        String long257 = "x".repeat(257);
        for (String route : new String[] {"/select", "/select_and_reserve"}) {
            assertError(
                    400,
                    "session affinity ID must not exceed 256 bytes",
                    call(route, "\"session_id\":\"" + long257 + "\""));
            assertError(
                    400,
                    "session affinity ID must not exceed 256 bytes",
                    call(route, "\"session_context\":{\"session_id\":\"" + "é".repeat(129) + "\"}"));
            assertError(
                    422,
                    "unknown variant `bogus`, expected one of `user_message`, `tool_result`, `other`",
                    call(route, "\"session_context\":{\"session_id\":\"s\",\"input_trigger\":\"bogus\"}"));
            assertError(422, "`session_context`: invalid type", call(route, "\"session_context\":\"s\""));
            assertError(422, "missing field `session_id`", call(route, "\"session_context\":{}"));
            assertError(422, "`session_id`: invalid type", call(route, "\"session_id\":5"));
            assertError(
                    422,
                    "`session_final`: invalid type",
                    call(route, "\"session_context\":{\"session_id\":\"s\",\"session_final\":\"yes\"}"));
            assertError(422, "missing field `worker_id`", call(route, "\"affinity_target\":{\"dp_rank\":0}"));
            assertError(422, "`affinity_target`: invalid type", call(route, "\"affinity_target\":[1]"));
        }
        assertEquals(before, http.get("/loads").body(), "nothing was booked");
        assertEquals(0, service.service.sessionCounts()[0], "nothing was bound");

        long bound = worker(
                "/select_and_reserve",
                "\"session_context\":{\"session_id\":\"" + "x".repeat(256) + "\",\"parent_session_id\":\"root\","
                        + "\"session_final\":false,\"input_trigger\":\"tool_result\"}");
        assertEquals(bound, worker("/select", "\"session_id\":\"" + "x".repeat(256) + "\""));
    }

    @Test
    void aBoundSessionBooksOnlyOnItsRankAndABookingElsewhereDropsTheBinding() throws Exception {
        long bound = startBound();
        long other = 3 - bound;
        assertEquals(
                other,
                worker("/select", "\"session_id\":\"s\",\"allowed_worker_ids\":[" + other + "]"),
                "a selection that books nothing is only steered");
        load(bound, "heavy", 64);
        assertEquals(bound, worker("/select", "\"session_id\":\"s\""));
        String before = http.get("/loads").body();
        assertError(
                400,
                "session s is bound to worker " + bound + ", not " + other,
                call("/select_and_reserve", "\"session_id\":\"s\",\"allowed_worker_ids\":[" + other + "]"));
        assertEquals(before, http.get("/loads").body(), "the refused booking left no load");
        assertEquals(other, worker("/select", "\"session_id\":\"s\""), "as in Dynamo, the binding went with it");
    }

    @Test
    void aSessionWhoseWorkerLeftIsBoundAnew() throws Exception {
        long bound = startBound();
        long other = 3 - bound;
        ok(200, http.send("DELETE", "/workers/" + bound));
        assertEquals(other, worker("/select_and_reserve", "\"session_id\":\"s\""));
        SelectServiceFixture.registerWorker(http, bound);
        load(other, "heavy", 64);
        assertEquals(other, worker("/select_and_reserve", "\"session_id\":\"s\""), "now bound to the one left");
    }

    @Test
    void aReplayedSelectionBindsItsSessionUnlessItMovedMeanwhile() throws Exception {
        start(3600);
        long chosen = worker("/select", "\"selection_id\":\"p1\",\"session_id\":\"r\"");
        assertEquals(
                chosen,
                ok(201, http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"p1\"}"))
                        .getLong("worker_id"));
        load(chosen, "heavy", 64);
        assertEquals(chosen, worker("/select", "\"session_id\":\"r\""), "the replay bound r");

        long cached = worker("/select", "\"selection_id\":\"p2\",\"session_id\":\"q\"");
        long elsewhere = 3 - cached;
        worker("/select_and_reserve", "\"session_id\":\"q\",\"allowed_worker_ids\":[" + elsewhere + "]");
        assertError(
                400,
                "session q is bound to worker " + elsewhere + ", not " + cached,
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"p2\"}"));
        assertError(
                404,
                "no pending selection p2",
                http.post("/reservations", "{\"model_name\":\"model\",\"selection_id\":\"p2\"}"));
    }

    @Test
    void withoutTheFlagSessionMembersAreUnknownMembers() throws Exception {
        start(0);
        long first = worker(
                "/select_and_reserve",
                "\"selection_id\":\"a1\",\"session_id\":5," + "\"session_context\":{\"input_trigger\":\"bogus\"}");
        load(first, "heavy", 64);
        assertEquals(3 - first, worker("/select_and_reserve", "\"session_id\":\"s\""));
        load(3 - first, "heavier", 128);
        assertEquals(first, worker("/select_and_reserve", "\"session_id\":\"s\""), "no binding steers");
        assertEquals(
                3 - first,
                worker("/select_and_reserve", "\"affinity_target\":{\"worker_id\":" + (3 - first) + "}"),
                "a request's own target steers without the flag too, as in Dynamo");
        assertError(422, "`affinity_target`: invalid type", call("/select", "\"affinity_target\":\"x\""));
    }
}
