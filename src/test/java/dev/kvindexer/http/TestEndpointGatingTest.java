package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The /test routes exist only when DYN_KV_INDEXER_TEST_ENDPOINTS says so; otherwise even a bad body gets 404. */
class TestEndpointGatingTest {
    @Test
    void environmentValuesThatMountTheRoutes() {
        for (String yes : List.of("1", "true", "TRUE", "yes", "on", " on ")) {
            assertTrue(ServeConfig.truthy(yes), yes);
        }
        for (String no : List.of("0", "false", "no", "off", "", "enabled")) {
            assertFalse(ServeConfig.truthy(no), no);
        }
        assertFalse(ServeConfig.truthy(null));
    }

    @Test
    void routesAreAbsentWhenNotEnabled() throws Exception {
        IndexerNode node = IndexerNode.start(
                new ServeConfig("127.0.0.1", 0, 1, 1, List.of(), null, "default", "default", List.of(), false, 0));
        try {
            HttpJson http = new HttpJson(node.httpPort());
            assertEquals(404, http.post("/test/pause_listener", "not json").statusCode());
            assertEquals(
                    404,
                    http.post("/test/resume_listener", "{\"instance_id\":1}").statusCode());
        } finally {
            node.close();
        }
    }

    @Test
    void routesAnswerWithTheReferenceCodesWhenEnabled() throws Exception {
        IndexerNode node = IndexerNode.start(ServeConfig.local(0));
        try {
            HttpJson http = new HttpJson(node.httpPort());
            assertEquals(
                    404,
                    http.post("/test/pause_listener", "{\"instance_id\":9}").statusCode());
            assertEquals(
                    201,
                    http.post(
                                    "/register",
                                    "{\"instance_id\":9,\"endpoint\":\"tcp://127.0.0.1:1\","
                                            + "\"model_name\":\"m\",\"block_size\":4}")
                            .statusCode());
            assertEquals(
                    409,
                    http.post("/test/resume_listener", "{\"instance_id\":9}").statusCode(),
                    http.get("/workers").body());
            assertEquals(
                    200,
                    http.post("/test/pause_listener", "{\"instance_id\":9,\"dp_rank\":0}")
                            .statusCode());
            var again = http.post("/test/pause_listener", "{\"instance_id\":9}");
            assertEquals(409, again.statusCode());
            assertTrue(again.body().contains("instance 9 dp_rank 0 cannot be paused from status paused"), again.body());
            assertEquals(
                    200,
                    http.post("/test/resume_listener", "{\"instance_id\":9}").statusCode());
            assertEquals(
                    404,
                    http.post("/test/resume_listener", "{\"instance_id\":9,\"dp_rank\":3}")
                            .statusCode());
        } finally {
            node.close();
        }
    }
}
