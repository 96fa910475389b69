package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The replay ring keeps the last 10,000 batches and answers "seq >= start" in order. */
class ReplayBufferTest {
    private static List<Long> seqs(List<ReplayBuffer.Entry> entries) {
        return entries.stream().map(ReplayBuffer.Entry::seq).collect(Collectors.toList());
    }

    private static List<Long> range(long from, long toInclusive) {
        return LongStream.rangeClosed(from, toInclusive).boxed().collect(Collectors.toList());
    }

    @Test
    void wrapsAtTenThousandKeepingTheNewest() {
        ReplayBuffer b = new ReplayBuffer();
        for (long s = 0; s <= 10_004; s++) {
            b.append(s, new byte[] {(byte) s});
        }
        assertEquals(10_000, b.size());
        assertEquals(5, b.oldestSeq());
        assertEquals(10_004, b.newestSeq());
        assertEquals(range(5, 10_004), seqs(b.from(0)));
        assertEquals(range(9_990, 10_004), seqs(b.from(9_990)));
        assertEquals((byte) 9_990, b.from(9_990).get(0).payload()[0]);
        assertEquals(List.of(10_004L), seqs(b.from(10_004)));
        assertTrue(b.from(10_005).isEmpty());
    }

    @Test
    void startBeyondSignedRangeIsTreatedAsUnsignedAndReturnsNothing() {
        ReplayBuffer b = new ReplayBuffer(4);
        b.append(0, new byte[1]);
        assertTrue(b.from(-1L).isEmpty());
    }

    @Test
    void emptyAndClearedBuffersReturnNothingAndAcceptSeqZeroAgain() {
        ReplayBuffer b = new ReplayBuffer(3);
        assertTrue(b.from(0).isEmpty());
        for (long s = 0; s < 5; s++) {
            b.append(s, new byte[1]);
        }
        assertEquals(List.of(2L, 3L, 4L), seqs(b.from(1)));
        b.clear();
        assertTrue(b.from(0).isEmpty());
        b.append(0, new byte[1]);
        assertEquals(List.of(0L), seqs(b.from(0)));
    }

    @Test
    void rejectsASeqThatDoesNotFollowTheNewest() {
        ReplayBuffer b = new ReplayBuffer(3);
        b.append(0, new byte[1]);
        assertThrows(IllegalArgumentException.class, () -> b.append(2, new byte[1]));
    }
}
