package dev.kvindexer.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Seq and topic frame rules (docs/protocol/zmq.md#live-messages). */
class LiveFramesTest {

    @Test
    void seqFrameOfSevenBytesIsRejected() {
        assertThrows(MalformedBatchException.class, () -> LiveFrames.seq(new byte[7]));
        assertThrows(MalformedBatchException.class, () -> LiveFrames.seq(new byte[0]));
        assertThrows(MalformedBatchException.class, () -> LiveFrames.seq(null));
    }

    @Test
    void seqIsBigEndian() throws Exception {
        assertEquals(0, LiveFrames.seq(WireVectors.bytes("0000000000000000")));
        assertEquals(0x0102030405060708L, LiveFrames.seq(WireVectors.bytes("0102030405060708")));
        assertEquals(-1L, LiveFrames.seq(WireVectors.bytes("ffffffffffffffff")));
    }

    @Test
    void twentyFourByteFrameUsesFirstEight() throws Exception {
        byte[] frame = new byte[24];
        System.arraycopy(LiveFrames.seqFrame(42), 0, frame, 0, 8);
        Arrays.fill(frame, 8, 24, (byte) 0xab); // publisher id
        assertEquals(42, LiveFrames.seq(frame));
    }

    @Test
    void seqFrameRoundTrip() throws Exception {
        assertArrayEquals(WireVectors.bytes("0000000000000001"), LiveFrames.seqFrame(1));
        for (long v : new long[] {0, 1, 255, 256, Long.MAX_VALUE, Long.MIN_VALUE, -1}) {
            assertEquals(v, LiveFrames.seq(LiveFrames.seqFrame(v)));
        }
    }

    @Test
    void topicCutAtFirstNul() {
        assertEquals("kv@pod-a@test-model", LiveFrames.topic(WireVectors.bytes(WireVectors.TOPIC_FRAME)));
        byte[] sglang = "kv@pod-b\u0000sgl-kv-epoch=1f\u0000x".getBytes(StandardCharsets.UTF_8);
        assertEquals("kv@pod-b", LiveFrames.topic(sglang));
        assertEquals("", LiveFrames.topic(new byte[0]));
        assertEquals("", LiveFrames.topic(new byte[] {0, 65}));
    }
}
