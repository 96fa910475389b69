package dev.kvindexer.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class IndexMemoryTest {
    private static final long HEAP = 1L << 30;

    @Test
    void readsBytesSuffixesAndShares() {
        assertEquals(536_870_912L, IndexMemory.parse("536870912", HEAP).maxBytes());
        assertEquals(512L << 20, IndexMemory.parse("512m", HEAP).maxBytes());
        assertEquals(2L << 30, IndexMemory.parse(" 2G ", HEAP).maxBytes());
        assertEquals(4096L << 10, IndexMemory.parse("4096k", HEAP).maxBytes());
        assertEquals(HEAP / 2, IndexMemory.parse("50%", HEAP).maxBytes());
        assertEquals(HEAP / 4, IndexMemory.parse("25 %", HEAP).maxBytes());
    }

    @Test
    void refusesWhatIsNotASizeWithTheFlagInTheMessage() {
        for (String bad : new String[] {"", "lots", "12x", "-5m", "0%", "150%", "1k", "99999999999999999g"}) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> IndexMemory.parse(bad, HEAP), bad);
            assertTrue(e.getMessage().contains("--max-index-memory"), e.getMessage());
        }
    }
}
