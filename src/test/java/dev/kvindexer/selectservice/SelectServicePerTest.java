package dev.kvindexer.selectservice;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.LoadStorm;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The selection services a test starts, closed after the test whatever its outcome; register it with
 * {@code @RegisterExtension}. Each test picks its own router environment, so a service cannot start before it.
 */
final class SelectServicePerTest implements AfterEachCallback {
    private SelectServiceFixture service;
    private final List<SelectServiceFixture> others = new ArrayList<>();

    /** Starts the test's service under Dynamo's router environment {@code env}, and returns its client. */
    HttpJson start(Map<String, String> env) throws Exception {
        service = SelectServiceFixture.start(env);
        return service.http;
    }

    /** Starts one more service of the test, with its own settings. */
    SelectServiceFixture start(Map<String, String> env, SelectServiceConfig config) throws Exception {
        SelectServiceFixture f = SelectServiceFixture.start(env, config);
        others.add(f);
        return f;
    }

    /** A client of the node's own HTTP API (the indexer's, with /overview), beside the service's. */
    HttpJson node() {
        return new HttpJson(service.node.httpPort());
    }

    /** active_requests / potential_decode_blocks / potential_prefill_tokens of worker 1 rank 0. */
    String worker1Loads() {
        return LoadStorm.reported(service.http).get("1/0");
    }

    /** The body of an answer that must have {@code status}. */
    static JsonObject ok(int status, HttpResponse<String> r) {
        assertEquals(status, r.statusCode(), r.body());
        return new JsonObject(r.body());
    }

    /**
     * The {@code /overlap_scores} of {@code tokens} in model {@code model}, one "worker/rank:a/b/..." per row with the
     * row's {@code members} in order.
     */
    static String overlapRows(HttpJson http, int[] tokens, String... members) {
        JsonObject scores = ok(
                200,
                http.post(
                        "/overlap_scores",
                        new JsonObject()
                                .put("model_name", "model")
                                .put(
                                        "token_ids",
                                        new JsonArray(
                                                Arrays.stream(tokens).boxed().toList()))
                                .encode()));
        StringBuilder out = new StringBuilder();
        for (Object o : scores.getJsonArray("workers")) {
            JsonObject r = (JsonObject) o;
            out.append(out.length() == 0 ? "" : " ")
                    .append(r.getLong("worker_id"))
                    .append('/')
                    .append(r.getInteger("dp_rank"))
                    .append(':');
            for (int i = 0; i < members.length; i++) {
                out.append(i == 0 ? "" : "/").append(r.getValue(members[i]));
            }
        }
        return out.toString();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (service != null) {
            service.close();
            service = null;
        }
        others.forEach(SelectServiceFixture::close);
        others.clear();
    }
}
