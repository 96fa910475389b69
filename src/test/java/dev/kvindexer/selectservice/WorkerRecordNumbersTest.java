package dev.kvindexer.selectservice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A worker's u64 capacities read back as the u64s it sent, past 2^63 too, in every answer that echoes them. */
class WorkerRecordNumbersTest {
    private SelectServiceFixture fixture;

    @BeforeEach
    void start() throws Exception {
        fixture = SelectServiceFixture.start(Map.of());
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    @Test
    void capacitiesAboveTwoToTheSixtyThreeAreEchoedUnsigned() {
        var posted = fixture.http.post(
                "/workers",
                "{\"worker_id\":18446744073709551615,\"model_name\":\"model\",\"endpoint\":\"http://w:8000\","
                        + "\"block_size\":4,\"max_num_batched_tokens\":18446744073709551615,"
                        + "\"total_kv_blocks\":9223372036854775808}");
        assertEquals(201, posted.statusCode(), posted.body());
        for (String body :
                new String[] {posted.body(), fixture.http.get("/workers").body()}) {
            assertTrue(body.contains("\"worker_id\":18446744073709551615"), body);
            assertTrue(body.contains("\"max_num_batched_tokens\":18446744073709551615"), body);
            assertTrue(body.contains("\"total_kv_blocks\":9223372036854775808"), body);
        }
    }
}
