package dev.kvindexer.ingest.zmtp;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts the bytes that follow the greeting into ZMTP frames (RFC 23: flags, a 1- or 8-byte size, the body) and
 * gathers message frames into whole multipart messages. Bytes arrive in any pieces; a frame's size is checked
 * against the message limit as soon as its header is complete, before its body is allocated.
 */
final class ZmtpFrameReader {
    private static final int FLAG_MORE = 0x01;
    private static final int FLAG_LONG = 0x02;
    private static final int RESERVED_FLAGS = 0xF8;
    /** Commands are small (READY carries a few properties); a larger one is no honest peer's. */
    static final int MAX_COMMAND_BYTES = 64 * 1024;
    /** The largest array the JVM allocates. */
    private static final long MAX_FRAME_BYTES = Integer.MAX_VALUE - 8;

    private static final byte[] EMPTY = new byte[0];

    /** Where whole frames go; both run on the reading thread, before the next byte is looked at. */
    interface Sink {
        void command(byte[] body) throws ZmtpException;

        /** A whole message, its frames in order; the list and arrays now belong to the sink. */
        void message(List<byte[]> frames) throws ZmtpException;
    }

    private final long maxMessageBytes;
    private final byte[] header = new byte[9];
    private int headerLength;
    private byte[] body;
    private int bodyLength;
    private boolean command;
    private boolean more;
    private List<byte[]> frames = new ArrayList<>(3);
    private long messageBytes;

    ZmtpFrameReader(long maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
    }

    /** Takes every byte of {@code in}; throws when the peer broke the protocol or a message would pass the limit. */
    void read(ByteBuffer in, Sink sink) throws ZmtpException {
        while (in.hasRemaining()) {
            if (body == null && !readHeader(in)) {
                return;
            }
            int n = Math.min(body.length - bodyLength, in.remaining());
            in.get(body, bodyLength, n);
            bodyLength += n;
            if (bodyLength == body.length) {
                frameDone(sink);
            }
        }
    }

    /** Reads header bytes; true once a header is complete and {@link #body} is ready for the frame's bytes. */
    private boolean readHeader(ByteBuffer in) throws ZmtpException {
        while (in.hasRemaining()) {
            header[headerLength++] = in.get();
            int flags = header[0] & 0xFF;
            if (headerLength == 1 && (flags & RESERVED_FLAGS) != 0) {
                throw ZmtpException.broken("reserved frame flags 0x" + Integer.toHexString(flags));
            }
            int size = (flags & FLAG_LONG) != 0 ? 9 : 2;
            if (headerLength == size) {
                headerLength = 0;
                startBody(flags, size == 2 ? header[1] & 0xFF : longSize());
                return true;
            }
        }
        return false;
    }

    private long longSize() {
        long size = 0;
        for (int i = 1; i < 9; i++) {
            size = (size << 8) | (header[i] & 0xFF);
        }
        return size;
    }

    private void startBody(int flags, long size) throws ZmtpException {
        command = (flags & ZmtpCommand.FLAG_COMMAND) != 0;
        more = (flags & FLAG_MORE) != 0;
        if (command) {
            if (more) {
                throw ZmtpException.broken("a command frame with MORE set");
            }
            if (!frames.isEmpty()) {
                throw ZmtpException.broken("a command inside a multipart message");
            }
            if (size < 0 || size > MAX_COMMAND_BYTES) {
                throw ZmtpException.broken("a command of " + Long.toUnsignedString(size) + " bytes");
            }
        } else if (size < 0 || size > maxMessageBytes - messageBytes || size > MAX_FRAME_BYTES) {
            throw new ZmtpException(new ZmtpFailure.TooLarge(size, messageBytes, maxMessageBytes));
        }
        body = size == 0 ? EMPTY : new byte[(int) size];
        bodyLength = 0;
    }

    private void frameDone(Sink sink) throws ZmtpException {
        byte[] done = body;
        body = null;
        if (command) {
            sink.command(done);
            return;
        }
        frames.add(done);
        messageBytes += done.length;
        if (!more) {
            List<byte[]> message = frames;
            frames = new ArrayList<>(3);
            messageBytes = 0;
            sink.message(message);
        }
    }
}
