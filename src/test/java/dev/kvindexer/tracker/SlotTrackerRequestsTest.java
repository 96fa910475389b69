package dev.kvindexer.tracker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.web.HttpError;
import dev.kvindexer.web.JsonBinding;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** A tracker's scope is read as the reference reads it: the group, then the model, the tenant only without a group. */
class SlotTrackerRequestsTest {
    private static SlotTrackerRequests.Register register(String json) {
        return JsonBinding.bind(new JsonObject(json), SlotTrackerRequests.Register.class);
    }

    @Test
    void aTenantIdIsNotReadWhenARoutingGroupIsSent() {
        SlotTrackerRequests.Register r = register("{\"model_name\":\"m\",\"routing_group\":\"g\",\"tenant_id\":5,"
                + "\"worker_id\":1,\"block_size\":16,\"dp_start\":0,\"dp_size\":1}");
        assertEquals(new PartitionKey("m", "g"), r.scope());
        assertEquals(
                new PartitionKey("m", "t"),
                register("{\"model_name\":\"m\",\"tenant_id\":\"t\",\"worker_id\":1,\"block_size\":16,"
                                + "\"dp_start\":0,\"dp_size\":1}")
                        .scope());
    }

    @Test
    void theGroupIsCheckedBeforeTheModel() {
        HttpError e = assertThrows(HttpError.class, () -> register("{\"routing_group\":5}"));
        assertEquals(
                "Failed to deserialize the JSON body into the target type: `routing_group`: invalid type, expected a "
                        + "string",
                e.getMessage());
    }
}
