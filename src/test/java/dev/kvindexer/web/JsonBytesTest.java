package dev.kvindexer.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Numbers written as bytes read as Java prints them, signed and unsigned, at every length and at the edges. */
class JsonBytesTest {
    @Test
    void numbersAsJavaPrintsThem() {
        long[] edges = {0, 1, 9, 10, 99, 100, -1, -9, -10, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1};
        for (long v : edges) {
            assertEquals(Long.toString(v), new JsonBytes(1).number(v).toString());
            assertEquals(Long.toUnsignedString(v), new JsonBytes(1).unsigned(v).toString());
        }
        SplittableRandom rnd = new SplittableRandom(5);
        for (int i = 0; i < 10_000; i++) {
            long v = rnd.nextLong() >> rnd.nextInt(64);
            assertEquals(Long.toString(v), new JsonBytes(4).number(v).toString());
            assertEquals(Long.toUnsignedString(v), new JsonBytes(4).unsigned(v).toString());
        }
    }

    @Test
    void growsAsItIsWrittenAndGivesItsBytes() {
        JsonBytes out = new JsonBytes(1);
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < 1_000; i++) {
            out.raw("{\"n\":").number(i).raw('}');
            expected.append("{\"n\":").append(i).append('}');
        }
        assertEquals(expected.toString(), out.toString());
        assertEquals(expected.toString(), out.toBuffer().toString());
    }
}
