package dev.kvindexer.wire;

/** STUB (replaced by the wire branch). */
public final class LiveFrames {
    private LiveFrames() {
    }

    public static long seq(byte[] seqFrame) throws MalformedBatchException {
        if (seqFrame == null || seqFrame.length < 8) {
            throw new MalformedBatchException("short seq frame");
        }
        return java.nio.ByteBuffer.wrap(seqFrame, 0, 8).getLong();
    }

    public static byte[] seqFrame(long seq) {
        return java.nio.ByteBuffer.allocate(8).putLong(seq).array();
    }
}
