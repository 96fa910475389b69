package dev.kvindexer.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** A str anywhere in a body keeps its meaning: ASCII, other UTF-8, and bytes that are no UTF-8. */
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
