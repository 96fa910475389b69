package dev.kvindexer.hash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Hash vectors HV1–HV14 (docs/protocol/hashing.md#test-vectors), chunk counts
 * (docs/protocol/hashing.md#token-bytes-and-chunking) and the chain negative control. */
class BlockHasherTest {

    private static long u(String unsigned) {
        return Long.parseUnsignedLong(unsigned);
    }

    private static long[] us(String... unsigned) {
        long[] out = new long[unsigned.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = u(unsigned[i]);
        }
        return out;
    }

    private static int[] range(int fromInclusive, int toInclusive) {
        return IntStream.rangeClosed(fromInclusive, toInclusive).toArray();
    }

    private static void assertUnsigned(long[] expected, long[] actual) {
        String[] e = new String[expected.length];
        String[] a = new String[actual.length];
        for (int i = 0; i < e.length; i++) {
            e[i] = Long.toUnsignedString(expected[i]);
        }
        for (int i = 0; i < a.length; i++) {
            a[i] = Long.toUnsignedString(actual[i]);
        }
        assertArrayEquals(e, a);
    }

    @Test
    void hv1RawBytes() {
        long h = BlockHasher.hashBytes("test data".getBytes(StandardCharsets.US_ASCII), 1337);
        assertEquals("13226331709069118873", Long.toUnsignedString(h));
        assertEquals(-5220412364640432743L, h);
    }

    @Test
    void hv2TokensAndChain() {
        long[] local = BlockHasher.localHashes(new int[] {11, 22, 33, 44, 55, 66, 77, 88}, 4, 1337);
        assertUnsigned(us("4117275816416024698", "6081346995852963768"), local);
        assertUnsigned(us("4117275816416024698", "5947898228081096063"), BlockHasher.sequenceHashes(local));
    }

    @Test
    void hv3SixteenTokens() {
        long[] local = BlockHasher.localHashes(range(1, 16), 16, 1337);
        assertUnsigned(us("16863443419780771464"), local);
        assertEquals(-1583300653928780152L, local[0]);
        assertUnsigned(us("16863443419780771464"), BlockHasher.sequenceHashes(local));
    }

    @Test
    void hv4() {
        assertUnsigned(us("9143094415614847814"), BlockHasher.localHashes(range(0, 3), 4, 1337));
    }

    @Test
    void hv5AndHv6PartialBlockDropped() {
        long[] expectedLocal = us("9143094415614847814", "12124091508212882195");
        long[] expectedSeq = us("9143094415614847814", "9510318385840434533");
        for (int[] tokens : new int[][] {range(0, 7), range(0, 8)}) {
            long[] local = BlockHasher.localHashes(tokens, 4, 1337);
            assertUnsigned(expectedLocal, local);
            assertEquals(-6322652565496669421L, local[1]);
            long[] seq = BlockHasher.sequenceHashes(local);
            assertUnsigned(expectedSeq, seq);
            assertEquals(-8936425687869117083L, seq[1]);
        }
    }

    @Test
    void hv7() {
        long[] local = BlockHasher.localHashes(new int[] {1, 2, 3, 4}, 4, 1337);
        assertUnsigned(us("14643705804678351452"), local);
        assertEquals(-3803038269031200164L, local[0]);
    }

    @Test
    void hv8LoraSeed() {
        assertEquals(u("8842669519798866845"), BlockHasher.hashBytes("adapter-a".getBytes(StandardCharsets.UTF_8), 0));
        long seed = BlockHasher.seedFor("adapter-a", null);
        assertEquals(u("8842669519798868182"), seed);
        assertUnsigned(us("6665157333201000639"), BlockHasher.localHashes(range(0, 3), 4, seed));
    }

    @Test
    void hv9SaltSeed() {
        assertEquals(u("1948188790972762749"), BlockHasher.hashBytes("tenant-a".getBytes(StandardCharsets.UTF_8), 1));
        long seed = BlockHasher.seedFor(null, "tenant-a");
        assertEquals(u("1948188790972764086"), seed);
        long[] local = BlockHasher.localHashes(range(0, 3), 4, seed);
        assertUnsigned(us("17009624042690211646"), local);
        assertEquals(-1437120031019339970L, local[0]);
    }

    @Test
    void hv10LoraAndSaltSeed() {
        long seed = BlockHasher.seedFor("adapter-a", "tenant-a");
        assertEquals(u("10790858310771630931"), seed);
        assertUnsigned(us("8269515957840517240"), BlockHasher.localHashes(range(0, 3), 4, seed));
    }

    @Test
    void emptyLoraAndSaltMeanAbsent() {
        assertEquals(1337L, BlockHasher.seedFor("", ""));
        assertEquals(1337L, BlockHasher.seedFor(null, null));
        assertEquals(BlockHasher.seedFor("adapter-a", null), BlockHasher.seedFor("adapter-a", ""));
        assertEquals(BlockHasher.seedFor(null, "tenant-a"), BlockHasher.seedFor("", "tenant-a"));
    }

    @Test
    void hv11Chain() {
        assertUnsigned(
                us("11", "750553365844651409", "3257565445809651757"),
                BlockHasher.sequenceHashes(new long[] {11, 22, 33}));
        assertEquals(u("750553365844651409"), BlockHasher.chain(11, 22));
    }

    @Test
    void hv12Chain() {
        long[] seq = BlockHasher.sequenceHashes(new long[] {11, 12, 13, 14});
        assertUnsigned(us("11", "10497221074644697006", "8340346278797266542", "4128529435866013841"), seq);
        assertEquals(-7949522999064854610L, seq[1]);
    }

    @Test
    void hv13WireVectorATokens() {
        long[] local = BlockHasher.localHashes(range(1, 32), 16, 1337);
        assertUnsigned(us("16863443419780771464", "2287610619914608821"), local);
        assertUnsigned(us("16863443419780771464", "12466389667045779788"), BlockHasher.sequenceHashes(local));
    }

    @Test
    void hv14EagleWindows() {
        int[] tokens = {10, 11, 12, 13, 14};
        assertEquals(u("5959138341449004422"), BlockHasher.eagleWindowHash(tokens, 0, 2, 1337));
        assertEquals(u("13917772031453556700"), BlockHasher.eagleWindowHash(tokens, 1, 2, 1337));
        assertEquals(-4528972042255994916L, BlockHasher.eagleWindowHash(tokens, 1, 2, 1337));
        // same bytes as a plain block over the window
        assertEquals(
                BlockHasher.hashTokens(new int[] {12, 13, 14}, 0, 3, 1337),
                BlockHasher.eagleWindowHash(tokens, 1, 2, 1337));
    }

    @Test
    void negativeControlChainSeedZero() {
        long[] local = us("4117275816416024698", "6081346995852963768");
        byte[] bytes = ByteBuffer.allocate(16)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(local[0])
                .putLong(local[1])
                .array();
        assertEquals(u("16736459605431117554"), BlockHasher.hashBytes(bytes, 0));
        assertNotEquals(u("16736459605431117554"), BlockHasher.chain(local[0], local[1]));
        assertEquals(u("5947898228081096063"), BlockHasher.hashBytes(bytes, 1337));
    }

    @ParameterizedTest
    @ValueSource(ints = {11, 32, 64})
    void chunkCounts(int bs) {
        assertEquals(1, BlockHasher.localHashes(range(0, bs - 1), bs, 1337).length);
        assertEquals(1, BlockHasher.localHashes(range(0, bs), bs, 1337).length);
        assertEquals(2, BlockHasher.localHashes(range(0, 2 * bs), bs, 1337).length);
        assertEquals(0, BlockHasher.localHashes(range(0, bs - 2), bs, 1337).length);
    }

    @Test
    void nonPositiveBlockSizeYieldsNothing() {
        assertEquals(0, BlockHasher.localHashes(range(0, 7), 0, 1337).length);
        assertEquals(0, BlockHasher.localHashes(range(0, 7), -4, 1337).length);
        assertEquals(0, BlockHasher.sequenceHashes(new long[0]).length);
    }

    @Test
    void hashTokensMatchesLittleEndianBytes() {
        int[] tokens = {0, 1, 0x7fffffff, 0xffffffff, 0x12345678};
        ByteBuffer buf = ByteBuffer.allocate(tokens.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int t : tokens) {
            buf.putInt(t);
        }
        long seed = BlockHasher.seedFor("x", "y");
        assertEquals(BlockHasher.hashBytes(buf.array(), seed), BlockHasher.hashTokens(tokens, 0, tokens.length, seed));
        // a sub-range and a switch of seeds on the same thread
        assertEquals(
                BlockHasher.localHashes(new int[] {1, 0x7fffffff}, 2, 1337)[0],
                BlockHasher.hashTokens(tokens, 1, 2, 1337));
        assertEquals(BlockHasher.hashBytes(buf.array(), seed), BlockHasher.hashTokens(tokens, 0, tokens.length, seed));
    }

    @Test
    void multimodalAppendsSortedMmHashesLittleEndian() {
        int[] tokens = {5, 6, 7, 8};
        long big = u("18446744073709551614"); // sorts after small values (unsigned order)
        long[] mm = {big, 3L};
        ByteBuffer buf = ByteBuffer.allocate(16 + 16).order(ByteOrder.LITTLE_ENDIAN);
        for (int t : tokens) {
            buf.putInt(t);
        }
        buf.putLong(3L).putLong(big);
        assertEquals(BlockHasher.hashBytes(buf.array(), 1337), BlockHasher.hashTokensWithMm(tokens, 0, 4, mm, 1337));
        assertEquals(big, mm[0], "input not modified");
        assertEquals(
                BlockHasher.hashTokens(tokens, 0, 4, 1337),
                BlockHasher.hashTokensWithMm(tokens, 0, 4, new long[0], 1337));
    }
}
