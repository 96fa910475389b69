package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The column form of a query's answer gives back exactly the records it was filled with. */
class OwnerMatchesTest {
    @Test
    void recordsRoundTripThroughTheColumns() {
        List<OwnerMatch> records = List.of(
                new OwnerMatch(-1L, 3, 1, 2, 3),
                new OwnerMatch(7, 0, 0, 5, 9),
                new OwnerMatch(Long.MIN_VALUE, Integer.MAX_VALUE, 128, 128, 128));
        OwnerMatches columns = OwnerMatches.of(records);
        assertEquals(3, columns.size());
        assertEquals(records, columns.toList());
        assertEquals(records.get(1), columns.get(1));
    }

    @Test
    void aBuilderFilledBelowItsCapacityHoldsOnlyWhatWasAdded() {
        OwnerMatches.Builder b = OwnerMatches.builder(4);
        b.add(9, 1, 2, 3, 4);
        OwnerMatches m = b.build();
        assertEquals(List.of(new OwnerMatch(9, 1, 2, 3, 4)), m.toList());
        assertThrows(IndexOutOfBoundsException.class, () -> m.get(1));
        assertThrows(IndexOutOfBoundsException.class, () -> m.get(-1));
    }

    @Test
    void nothingAddedIsTheSharedEmptyAnswer() {
        OwnerMatches m = OwnerMatches.builder(8).build();
        assertSame(OwnerMatches.NONE, m);
        assertTrue(m.isEmpty());
        assertEquals(List.of(), m.toList());
    }
}
