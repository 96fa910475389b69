package dev.kvindexer.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * A str anywhere in a body keeps its meaning (ASCII, other UTF-8, bytes that are no UTF-8), an integer its kind, and
 * an entry read unbuilt is refused where a built one is.
 */
class MsgpackValuesTest {
    private static final byte[] NOT_UTF8 = {'l', 'o', (byte) 0xc3, 0x28, 'r', 'a'};

    @Test
    void strsReadInPlaceKeepTheirText() throws Exception {
        byte[] body = withPrefix(7, map("model", "m-1", "lora", "实例-é", "raw", NOT_UTF8, "long", "k".repeat(300)));
        MsgpackValues.MapValue root = (MsgpackValues.MapValue) MsgpackValues.first(body, 7, body.length - 7);
        assertEquals("m-1", root.get("model"));
        assertEquals("实例-é", root.get("lora"));
        assertEquals("k".repeat(300), root.get("long"));
        MsgpackValues.InvalidUtf8 raw = assertInstanceOf(MsgpackValues.InvalidUtf8.class, root.get("raw"));
        assertArrayEquals(NOT_UTF8, raw.bytes());
    }

    @Test
    void aStrPastTheEndIsMalformed() throws Exception {
        byte[] whole = map("model", "abcdef");
        byte[] cut = Arrays.copyOf(whole, whole.length - 2);
        assertThrows(MsgpackValues.Malformed.class, () -> MsgpackValues.first(cut));
        // the same bytes, the window ending early
        assertThrows(MsgpackValues.Malformed.class, () -> MsgpackValues.first(whole, 0, whole.length - 1));
    }

    @Test
    void uint64sAboveAndBelowTheLongRangeStayUnboxedAndReadAsBefore() throws Exception {
        BigInteger above = new BigInteger("18446744073709551557"); // 2^64 - 59
        byte[] body;
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(4);
            p.packBigInteger(above);
            p.packLong(Long.MAX_VALUE); // uint64 on the wire
            p.packLong(7);
            p.packLong(-3);
            body = p.toByteArray();
        }
        MsgpackValues.Integers ints = assertInstanceOf(MsgpackValues.Integers.class, MsgpackValues.first(body));
        assertEquals(List.of(above, Long.MAX_VALUE, 7L, -3L), List.copyOf(ints));
        assertEquals(above.longValue(), ints.getLong(0));
        assertTrue(ints.aboveLong(0));
        assertFalse(ints.aboveLong(1));
        assertEquals(Long.MAX_VALUE, ints.getLong(1));
        assertEquals(-3L, ints.getLong(3));
        assertEquals(above, MsgpackValues.first(Arrays.copyOfRange(body, 1, 10)));
        assertEquals(Long.MAX_VALUE, MsgpackValues.first(Arrays.copyOfRange(body, 10, 19)));
    }

    @Test
    void manyUint64sAboveTheLongRangeKeepTheirMarks() throws Exception {
        byte[] body;
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(200);
            for (int i = 0; i < 200; i++) {
                p.packBigInteger(
                        i % 3 == 0 ? BigInteger.ONE.shiftLeft(63).add(BigInteger.valueOf(i)) : BigInteger.valueOf(i));
            }
            body = p.toByteArray();
        }
        MsgpackValues.Integers ints = assertInstanceOf(MsgpackValues.Integers.class, MsgpackValues.first(body));
        for (int i = 0; i < 200; i++) {
            assertEquals(i % 3 == 0, ints.aboveLong(i), "element " + i);
            assertEquals(i % 3 == 0 ? Long.MIN_VALUE + i : i, ints.getLong(i));
        }
    }

    @Test
    void anUnreadEntryIsCheckedButNotBuilt() throws Exception {
        byte[] body =
                Pack.of(Map.of("token_ids", List.of(1L, 2L, List.of("x", Map.of("k", 3L))), "type", "BlockStored"));
        MsgpackValues.MapValue root = (MsgpackValues.MapValue) MsgpackValues.first(body, Set.of("token_ids"));
        assertEquals(MsgpackValues.Unread.INSTANCE, root.get("token_ids"));
        assertEquals("BlockStored", root.get("type"));
        // the same bytes read whole
        assertInstanceOf(List.class, ((MsgpackValues.MapValue) MsgpackValues.first(body)).get("token_ids"));
    }

    @Test
    void anUnreadEntryRefusesWhatAReadOneRefuses() throws Exception {
        Object deep = 1L;
        for (int i = 0; i <= MsgpackValues.MAX_DEPTH; i++) {
            deep = List.of(deep);
        }
        byte[] tooDeep = Pack.of(Map.of("token_ids", deep));
        assertThrows(MsgpackValues.Malformed.class, () -> MsgpackValues.first(tooDeep));
        assertThrows(MsgpackValues.Malformed.class, () -> MsgpackValues.first(tooDeep, Set.of("token_ids")));
        byte[] whole = Pack.of(Map.of("token_ids", List.of("abcdef", 5L)));
        byte[] cut = Arrays.copyOf(whole, whole.length - 3);
        assertThrows(MsgpackValues.Malformed.class, () -> MsgpackValues.first(cut, Set.of("token_ids")));
        // an array declaring more elements than bytes are left
        byte[] liar = {(byte) 0x81, (byte) 0xa9, 't', 'o', 'k', 'e', 'n', '_', 'i', 'd', 's', (byte) 0xdd, 0x7f, 0, 0, 0
        };
        assertThrows(MsgpackValues.Malformed.class, () -> MsgpackValues.first(liar, Set.of("token_ids")));
    }

    /** A map of str keys to strs, or to raw str payloads given as bytes. */
    private static byte[] map(Object... kv) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(kv.length / 2);
            for (int i = 0; i < kv.length; i += 2) {
                p.packString((String) kv[i]);
                if (kv[i + 1] instanceof byte[] raw) {
                    p.packRawStringHeader(raw.length).writePayload(raw);
                } else {
                    byte[] utf8 = ((String) kv[i + 1]).getBytes(StandardCharsets.UTF_8);
                    p.packRawStringHeader(utf8.length).writePayload(utf8);
                }
            }
            return p.toByteArray();
        }
    }

    private static byte[] withPrefix(int n, byte[] body) {
        byte[] out = new byte[n + body.length];
        Arrays.fill(out, 0, n, (byte) 0xc1);
        System.arraycopy(body, 0, out, n, body.length);
        return out;
    }
}
