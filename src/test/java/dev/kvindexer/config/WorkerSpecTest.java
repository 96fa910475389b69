package dev.kvindexer.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class WorkerSpecTest {
    @Test
    void parsesTheReferenceExample() {
        assertEquals(
                List.of(new WorkerSpec(1, 0, "tcp://host:5557"), new WorkerSpec(2, 1, "tcp://host:5558")),
                WorkerSpec.parseList("1=tcp://host:5557,2:1=tcp://host:5558"));
    }

    @Test
    void trimsWhitespaceAndAcceptsUnsigned64BitIds() {
        assertEquals(
                List.of(new WorkerSpec(-1L, 3, "tcp://h:1")),
                WorkerSpec.parseList(" 18446744073709551615:3 = tcp://h:1 "));
    }

    @Test
    void rejectsBadEntries() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> WorkerSpec.parseList("1"))
                .getMessage()
                .contains("invalid worker entry"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> WorkerSpec.parseList("x=tcp://h:1"))
                .getMessage()
                .contains("invalid worker entry"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> WorkerSpec.parseList("1:-1=tcp://h:1"))
                .getMessage()
                .contains("invalid worker entry"));
        assertEquals(
                "invalid ZMQ endpoint `tcp://host`: missing TCP port",
                assertThrows(IllegalArgumentException.class, () -> WorkerSpec.parseList("1=tcp://host"))
                        .getMessage());
    }

    @Test
    void workersNeedABlockSize() {
        List<WorkerSpec> w = WorkerSpec.parseList("1=tcp://h:1");
        assertThrows(
                IllegalArgumentException.class,
                () -> new ServeConfig("127.0.0.1", 0, 1, 1, w, null, "m", "t", List.of(), false, 0));
    }
}
