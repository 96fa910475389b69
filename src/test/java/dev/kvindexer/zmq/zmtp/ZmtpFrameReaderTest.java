package dev.kvindexer.zmq.zmtp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Frames cut from bytes that arrive in any pieces, and the limits checked from headers alone. */
class ZmtpFrameReaderTest {
    private final List<List<byte[]>> messages = new ArrayList<>();
    private final List<byte[]> commands = new ArrayList<>();
    private final ZmtpFrameReader.Sink sink = new ZmtpFrameReader.Sink() {
        @Override
        public void command(byte[] body) {
            commands.add(body);
        }

        @Override
        public void message(List<byte[]> frames, long held) {
            messages.add(frames);
        }
    };

    @Test
    void messagesAndCommandsSurviveAnySplitOfTheStream() throws Exception {
        SplittableRandom rnd = new SplittableRandom(5);
        List<byte[][]> sent = new ArrayList<>();
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        for (int i = 0; i < 300; i++) {
            if (i % 7 == 0) {
                wire.writeBytes(ZmtpCommand.ping(150));
            }
            byte[][] m = new byte[1 + rnd.nextInt(4)][];
            for (int f = 0; f < m.length; f++) {
                m[f] = new byte[rnd.nextInt(4) == 0 ? 250 + rnd.nextInt(600) : rnd.nextInt(20)];
                rnd.nextBytes(m[f]);
                frame(wire, m[f], f < m.length - 1, rnd.nextInt(5) == 0);
            }
            sent.add(m);
        }
        byte[] bytes = wire.toByteArray();
        ZmtpFrameReader reader = new ZmtpFrameReader(1 << 20);
        for (int at = 0; at < bytes.length; ) {
            int n = Math.min(bytes.length - at, 1 + rnd.nextInt(rnd.nextBoolean() ? 3 : 700));
            reader.read(ByteBuffer.wrap(bytes, at, n), sink);
            at += n;
        }
        assertEquals(sent.size(), messages.size());
        for (int i = 0; i < sent.size(); i++) {
            assertEquals(sent.get(i).length, messages.get(i).size());
            for (int f = 0; f < sent.get(i).length; f++) {
                assertArrayEquals(sent.get(i)[f], messages.get(i).get(f));
            }
        }
        assertEquals(43, commands.size());
        assertInstanceOf(ZmtpCommand.Ping.class, ZmtpCommand.parse(commands.get(0)));
    }

    @Test
    void aMessageOverTheLimitIsRefusedFromTheHeaderOfTheFrameThatPassesIt() {
        ZmtpFrameReader reader = new ZmtpFrameReader(1000);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        frame(wire, new byte[600], true, false);
        // Only the header of the second frame: its body never comes.
        wire.writeBytes(new byte[] {0x02, 0, 0, 0, 0, 0, 0, 1, (byte) 0x91});
        ZmtpException e =
                assertThrows(ZmtpException.class, () -> reader.read(ByteBuffer.wrap(wire.toByteArray()), sink));
        ZmtpFailure.TooLarge t = assertInstanceOf(ZmtpFailure.TooLarge.class, e.failure());
        assertEquals(401, t.declaredBytes());
        assertEquals(600, t.bytesBefore());
        assertTrue(messages.isEmpty());
    }

    @Test
    void anEightByteSizeWithItsTopBitSetIsRefused() {
        ZmtpFrameReader reader = new ZmtpFrameReader(Long.MAX_VALUE);
        byte[] header = {0x02, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0};
        ZmtpException e = assertThrows(ZmtpException.class, () -> reader.read(ByteBuffer.wrap(header), sink));
        assertInstanceOf(ZmtpFailure.TooLarge.class, e.failure());
    }

    @Test
    void commandsThatBreakTheRulesAreRefused() {
        assertBroken(new byte[] {0x05, 1, 'x'}, "MORE");
        assertBroken(new byte[] {0x06, 0, 0, 0, 0, 0, 1, 0, 1}, "a command of 65537 bytes");
        assertBroken(new byte[] {0x01, 1, 'a', 0x04, 1, 'x'}, "inside a multipart message");
        assertBroken(new byte[] {0x08, 0}, "reserved frame flags");
    }

    private void assertBroken(byte[] wire, String expected) {
        ZmtpException e =
                assertThrows(ZmtpException.class, () -> new ZmtpFrameReader(1 << 20).read(ByteBuffer.wrap(wire), sink));
        assertInstanceOf(ZmtpFailure.BrokenProtocol.class, e.failure());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    /** One message frame: short or long form (a long one may carry a small size), MORE as asked. */
    private static void frame(ByteArrayOutputStream wire, byte[] body, boolean more, boolean forceLong) {
        boolean isLong = forceLong || body.length > 255;
        wire.write((more ? 1 : 0) | (isLong ? 2 : 0));
        if (isLong) {
            wire.writeBytes(ByteBuffer.allocate(8).putLong(body.length).array());
        } else {
            wire.write(body.length);
        }
        wire.writeBytes(body);
    }
}
