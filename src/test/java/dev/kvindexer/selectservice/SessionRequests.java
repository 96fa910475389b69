package dev.kvindexer.selectservice;

import static dev.kvindexer.selectservice.SelectServicePerTest.ok;

import dev.kvindexer.support.HttpJson;

/** The requests the session-affinity tests send: a selection of one prompt of model {@code model}, heavy bookings. */
final class SessionRequests {
    private static final String PROMPT = "\"token_ids\":[1,2,3,4,5,6,7,8]";

    private SessionRequests() {}

    /** The worker {@code route} chooses for the prompt with these extra members (a JSON fragment, may be empty). */
    static long worker(HttpJson http, String route, String members) {
        String body = "{\"model_name\":\"model\"," + PROMPT + (members.isEmpty() ? "" : ",") + members + "}";
        return ok(200, http.post(route, body)).getLong("worker_id");
    }

    /** Books {@code blocks} blocks of prefill on {@code worker} under {@code id}, so the load points away from it. */
    static void load(HttpJson http, long worker, String id, int blocks) {
        StringBuilder hashes = new StringBuilder();
        for (int i = 0; i < blocks; i++) {
            hashes.append(i == 0 ? "" : ",").append(900_000 + 1000L * worker + i);
        }
        ok(
                201,
                http.post(
                        "/reservations",
                        "{\"model_name\":\"model\",\"selection_id\":\"" + id + "\",\"worker_id\":" + worker
                                + ",\"sequence_hashes\":[" + hashes + "],\"isl_tokens\":" + 4 * blocks
                                + ",\"effective_prefill_tokens\":" + 4 * blocks + "}"));
    }
}
