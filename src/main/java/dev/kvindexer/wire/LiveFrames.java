package dev.kvindexer.wire;

import java.nio.charset.StandardCharsets;

/** Live message framing (docs/protocol/zmq.md#live-messages): seq frame and topic frame rules. */
public final class LiveFrames {
    private LiveFrames() {}

    /**
     * seq from a seq frame: frames shorter than 8 bytes → MalformedBatchException; ≥ 8 bytes → first
     * 8 bytes big-endian (a proposed 24-byte frame appends a publisher id after the seq).
     */
    public static long seq(byte[] seqFrame) throws MalformedBatchException {
        if (seqFrame == null || seqFrame.length < Long.BYTES) {
            throw new MalformedBatchException(
                    "seq frame shorter than 8 bytes: " + (seqFrame == null ? "null" : seqFrame.length));
        }
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (seqFrame[i] & 0xffL);
        }
        return v;
    }

    /** Topic cut at the first 0x00 byte (SGLang appends {@code 0x00 sgl-kv-epoch=...}), as UTF-8. */
    public static String topic(byte[] topicFrame) {
        if (topicFrame == null) {
            return "";
        }
        int end = 0;
        while (end < topicFrame.length && topicFrame[end] != 0) {
            end++;
        }
        return new String(topicFrame, 0, end, StandardCharsets.UTF_8);
    }

    /** 8-byte big-endian seq frame, for publishers and tests. */
    public static byte[] seqFrame(long seq) {
        byte[] out = new byte[Long.BYTES];
        for (int i = Long.BYTES - 1; i >= 0; i--) {
            out[i] = (byte) seq;
            seq >>>= 8;
        }
        return out;
    }
}
