package dev.kvindexer.selectservice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.kvindexer.support.HttpJson;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The booking key of Dynamo's earlier selection service: its gateway EPP sends the gateway request id as
 * {@code selection_id} and a fresh UUID as {@code reservation_id}, then completes and frees the booking by the UUID.
 */
class ReservationIdTest {
    private static final String BOOKING =
            "{\"model_name\":\"model\",\"token_ids\":[1,2,3,4],\"allowed_worker_ids\":[1],";

    @Test
    void aBookingNamedByReservationIdIsFoundAndFreedByIt() throws Exception {
        try (SelectServiceFixture f = SelectServiceFixture.start(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"))) {
            HttpJson h = f.http;
            SelectServiceFixture.registerWorker(h, 1);
            HttpResponse<String> booked =
                    h.post("/select_and_reserve", BOOKING + "\"selection_id\":\"gw-1\",\"reservation_id\":\"uuid-1\"}");
            assertEquals(200, booked.statusCode(), booked.body());
            JsonObject answer = new JsonObject(booked.body());
            assertEquals("gw-1", answer.getString("selection_id"));
            assertEquals("uuid-1", answer.getString("reservation_id"));
            assertEquals(1, activeRequests(h));

            // The gateway request id may come again (a retry) under another reservation: a booking of its own.
            HttpResponse<String> again =
                    h.post("/select_and_reserve", BOOKING + "\"selection_id\":\"gw-1\",\"reservation_id\":\"uuid-2\"}");
            assertEquals(200, again.statusCode(), again.body());
            assertEquals(2, activeRequests(h));

            assertEquals(
                    200, h.send("POST", "/reservations/uuid-1/prefill_complete").statusCode());
            assertEquals(200, h.send("DELETE", "/reservations/uuid-1").statusCode());
            assertEquals(200, h.send("DELETE", "/reservations/uuid-2").statusCode());
            assertEquals(0, activeRequests(h), "freed by the ids the client booked them under");
            assertEquals(404, h.send("DELETE", "/reservations/gw-1").statusCode(), "nothing was booked as gw-1");

            HttpResponse<String> plain = h.post("/select_and_reserve", BOOKING + "\"selection_id\":\"gw-3\"}");
            assertEquals("gw-3", new JsonObject(plain.body()).getString("selection_id"));
            assertFalse(new JsonObject(plain.body()).containsKey("reservation_id"), "today's answer has none");
            assertEquals(200, h.send("DELETE", "/reservations/gw-3").statusCode());
        }
    }

    private static int activeRequests(HttpJson h) {
        JsonObject row = new JsonArray(h.get("/loads").body())
                .getJsonObject(0)
                .getJsonArray("loads")
                .getJsonObject(0);
        return row.getInteger("active_requests");
    }
}
