package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The lengths inside an event-bus frame, as Vert.x's clustered messages lay them out, byte by byte or at once. */
class BusMessageCheckTest {
    /** A message's bytes after the frame length: envelope, headers, then a body of {@code body} bytes. */
    private static byte[] message(int codec, String[][] headers, int declaredBody, int body) {
        ByteBuffer b = ByteBuffer.allocate(1024);
        b.put((byte) 1).put((byte) codec).put((byte) 0);
        for (String s : new String[] {"kvindexer.shard.query", "__vertx.reply.7", "127.0.0.1:4711"}) {
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            b.putInt(bytes.length).put(bytes);
        }
        if (headers.length == 0) {
            b.putInt(4);
        } else {
            int at = b.position();
            b.putInt(0).putInt(headers.length);
            for (String[] h : headers) {
                for (String s : h) {
                    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
                    b.putInt(bytes.length).put(bytes);
                }
            }
            b.putInt(at, b.position() - at);
        }
        b.putInt(declaredBody);
        b.put(new byte[body]);
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    /** Fed whole or a byte at a time: the index it stopped at, or -1 when refused, and whether it was done by then. */
    private static boolean passes(byte[] frame, boolean byteByByte) {
        BusMessageCheck check = new BusMessageCheck();
        check.begin(frame.length);
        ByteBuf buf = Unpooled.wrappedBuffer(frame);
        int i = 0;
        while (i < frame.length && !check.done()) {
            int stopped = check.consume(buf, i, byteByByte ? i + 1 : frame.length);
            if (stopped < 0) {
                return false;
            }
            i = Math.max(stopped, byteByByte ? i + 1 : frame.length);
        }
        return check.completeAtEnd();
    }

    @Test
    void wellFormedMessagesPass() {
        String[][] none = {};
        String[][] two = {{"trace", "00-abc-01"}, {"", "x"}};
        for (boolean byteByByte : new boolean[] {false, true}) {
            assertTrue(passes(message(3, none, 16, 16), byteByByte), "a Buffer body");
            assertTrue(passes(message(6, two, 5, 5), byteByByte), "headers and a byte[] body");
            assertTrue(passes(message(0, none, 0, 0), byteByByte), "a null body: nothing after the headers is read");
            assertTrue(passes(message(2, two, 0, 0), byteByByte), "an empty String body");
        }
    }

    @Test
    void aLengthPastTheFrameIsRefused() {
        String[][] none = {};
        for (boolean byteByByte : new boolean[] {false, true}) {
            assertFalse(passes(message(6, none, Integer.MAX_VALUE, 5), byteByByte), "a body past the frame");
            assertFalse(passes(message(3, none, -1, 0), byteByByte), "a negative body");
            assertFalse(passes(message(99, none, 0, 0), byteByByte), "a codec Vert.x does not know");
            byte[] address = message(3, none, 0, 0);
            ByteBuffer.wrap(address).putInt(3, Integer.MAX_VALUE - 8);
            assertFalse(passes(address, byteByByte), "an address past the frame");
            byte[] header = message(3, new String[][] {{"k", "v"}}, 0, 0);
            int headersAt = 3 + 4 + 21 + 4 + 15 + 4 + 14;
            ByteBuffer.wrap(header).putInt(headersAt + 8 + 4 + 1, 1 << 30);
            assertFalse(passes(header, byteByByte), "a header value past its section");
            byte[] cut = message(3, none, 8, 8);
            assertFalse(passes(java.util.Arrays.copyOf(cut, 20), byteByByte), "a frame ending inside its envelope");
        }
        BusMessageCheck check = new BusMessageCheck();
        check.begin(100);
        byte[] frame = ByteBuffer.allocate(100)
                .put((byte) 1)
                .put((byte) 2)
                .put((byte) 0)
                .putInt(1 << 30)
                .array();
        assertEquals(-1, check.consume(Unpooled.wrappedBuffer(frame), 0, frame.length));
        assertTrue(check.problem().contains("address"), check.problem());
    }
}
