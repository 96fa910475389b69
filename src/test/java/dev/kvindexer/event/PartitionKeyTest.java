package dev.kvindexer.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** /dump keys name one partition each, and read back to the partition that wrote them. */
class PartitionKeyTest {
    @Test
    void keysThatOnceCollidedAreDistinct() {
        PartitionKey a = new PartitionKey("x:y", "z");
        PartitionKey b = new PartitionKey("x", "y:z");
        assertNotEquals(a.dumpKey(), b.dumpKey());
        assertEquals(a, PartitionKey.fromDumpKey(a.dumpKey()));
        assertEquals(b, PartitionKey.fromDumpKey(b.dumpKey()));
    }

    @Test
    void everyNameRoundTrips() {
        String[] names = {"llama3:8b", "%", "%3A", "%253a", "a%3ab:c", ":", "::", "", "org/model", "m\u00e9t\u00e9o"};
        for (String model : names) {
            for (String routingGroup : names) {
                PartitionKey k = new PartitionKey(model, routingGroup);
                assertEquals(k, PartitionKey.fromDumpKey(k.dumpKey()), k.dumpKey());
            }
        }
    }

    @Test
    void plainNamesKeepDynamosKeyAndDynamosKeysReadAsBefore() {
        assertEquals("llama-3-8b:default", new PartitionKey("llama-3-8b", "default").dumpKey());
        assertEquals(new PartitionKey("mistral-7b", "customer:a"), PartitionKey.fromDumpKey("mistral-7b:customer:a"));
        assertNull(PartitionKey.fromDumpKey("no-colon"));
    }
}
