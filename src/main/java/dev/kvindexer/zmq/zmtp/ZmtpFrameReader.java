package dev.kvindexer.zmq.zmtp;

import dev.kvindexer.net.NetworkBudget;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Cuts the bytes that follow the greeting into ZMTP frames (RFC 23: flags, a 1- or 8-byte size, the body) and
 * gathers message frames into whole multipart messages. Bytes arrive in any pieces. What a connection holds is
 * bounded by construction: a frame's array grows with the bytes that arrive, never to the size its header declares;
 * every array and every part is reserved from the node's {@link NetworkBudget} before it is held, a part at a
 * fixed charge beyond its payload; a message is bounded in payload and in its number of parts, so empty parts cost
 * at most {@link #MAX_PARTS} charges; and the time a frame or message has been under way is kept for the
 * session's deadline.
 */
final class ZmtpFrameReader {
    private static final int FLAG_MORE = 0x01;
    private static final int FLAG_LONG = 0x02;
    private static final int RESERVED_FLAGS = 0xF8;
    /** Commands are small (READY carries a few properties); a larger one is no honest peer's. */
    static final int MAX_COMMAND_BYTES = 64 * 1024;
    /** Parts of one message: a live batch has three; ZMQ allows more, no publisher we read sends dozens. */
    static final int MAX_PARTS = 64;
    /** What one part costs beyond its payload (the array's header, the list's slot), reserved as such. */
    static final int PART_OVERHEAD = 64;
    /** A frame's array starts at most this large and doubles as its bytes arrive. */
    static final int FIRST_ALLOCATION = 64 * 1024;
    /** The largest array the JVM allocates. */
    private static final long MAX_FRAME_BYTES = Integer.MAX_VALUE - 8;

    private static final byte[] EMPTY = new byte[0];

    /** Where whole frames go; both run on the reading thread, before the next byte is looked at. */
    interface Sink {
        void command(byte[] body) throws ZmtpException;

        /**
         * A whole message, its frames in order; the list and arrays now belong to the sink, and so do {@code held}
         * bytes of the budget, for the sink to release once it lets the message go.
         */
        void message(List<byte[]> frames, long held) throws ZmtpException;
    }

    private final long maxMessageBytes;
    private final NetworkBudget budget;
    private final byte[] header = new byte[9];
    private int headerLength;
    /** The frame being read: its array (grown as bytes come), its declared size, the bytes in it so far. */
    private byte[] body;

    private long size;
    private int bodyLength;
    private boolean command;
    private boolean more;
    private List<byte[]> frames = new ArrayList<>(3);
    /** The message's payload so far, checked against the limit. */
    private long messagePayload;

    /** Budget bytes this reader holds now: the message's parts and the frame in progress. */
    private long held;
    /** System.nanoTime() of the first byte of the frame or message under way; 0 between messages. */
    private long startedAt;

    ZmtpFrameReader(long maxMessageBytes, NetworkBudget budget) {
        this.maxMessageBytes = maxMessageBytes;
        this.budget = budget;
    }

    ZmtpFrameReader(long maxMessageBytes) {
        this(maxMessageBytes, NetworkBudget.unbounded());
    }

    /**
     * Takes every byte of {@code in}; throws when the peer broke the protocol, a message would pass the limit or
     * the budget cannot hold what arrived.
     */
    void read(ByteBuffer in, Sink sink, long now) throws ZmtpException {
        while (in.hasRemaining()) {
            if (startedAt == 0) {
                startedAt = now == 0 ? 1 : now;
            }
            if (body == null && !readHeader(in)) {
                return;
            }
            int n = (int) Math.min(size - bodyLength, in.remaining());
            if (bodyLength + n > body.length) {
                grow(bodyLength + n);
            }
            in.get(body, bodyLength, n);
            bodyLength += n;
            if (bodyLength == size) {
                frameDone(sink);
            }
        }
    }

    void read(ByteBuffer in, Sink sink) throws ZmtpException {
        read(in, sink, System.nanoTime());
    }

    /** When the frame or message under way began (System.nanoTime()), or 0 when none is. */
    long startedAt() {
        return startedAt;
    }

    /** Reading was held back by the owner, not the peer: the deadline of what is under way starts again. */
    void restartClock(long now) {
        if (startedAt != 0) {
            startedAt = now == 0 ? 1 : now;
        }
    }

    /** Budget bytes held for what has arrived of the message under way. */
    long held() {
        return held;
    }

    /** Drops what is under way and gives its bytes back: the connection is closing. */
    void discard() {
        budget.release(held);
        held = 0;
        body = null;
        frames = new ArrayList<>(3);
        messagePayload = 0;
        startedAt = 0;
    }

    /** Reads header bytes; true once a header is complete and {@link #body} is ready for the frame's bytes. */
    private boolean readHeader(ByteBuffer in) throws ZmtpException {
        while (in.hasRemaining()) {
            header[headerLength++] = in.get();
            int flags = header[0] & 0xFF;
            if (headerLength == 1 && (flags & RESERVED_FLAGS) != 0) {
                throw ZmtpException.broken("reserved frame flags 0x" + Integer.toHexString(flags));
            }
            int headerSize = (flags & FLAG_LONG) != 0 ? 9 : 2;
            if (headerLength == headerSize) {
                headerLength = 0;
                startBody(flags, headerSize == 2 ? header[1] & 0xFF : longSize());
                return true;
            }
        }
        return false;
    }

    private long longSize() {
        long s = 0;
        for (int i = 1; i < 9; i++) {
            s = (s << 8) | (header[i] & 0xFF);
        }
        return s;
    }

    private void startBody(int flags, long declared) throws ZmtpException {
        command = (flags & ZmtpCommand.FLAG_COMMAND) != 0;
        more = (flags & FLAG_MORE) != 0;
        if (command) {
            if (more) {
                throw ZmtpException.broken("a command frame with MORE set");
            }
            if (!frames.isEmpty()) {
                throw ZmtpException.broken("a command inside a multipart message");
            }
            if (declared < 0 || declared > MAX_COMMAND_BYTES) {
                throw ZmtpException.broken("a command of " + Long.toUnsignedString(declared) + " bytes");
            }
        } else {
            if (frames.size() >= MAX_PARTS) {
                throw ZmtpException.broken("a message of more than " + MAX_PARTS + " parts");
            }
            if (declared < 0 || declared > maxMessageBytes - messagePayload || declared > MAX_FRAME_BYTES) {
                throw new ZmtpException(new ZmtpFailure.TooLarge(declared, messagePayload, maxMessageBytes));
            }
            reserve(PART_OVERHEAD);
        }
        size = declared;
        bodyLength = 0;
        body = EMPTY;
        if (declared > 0) {
            grow((int) Math.min(declared, FIRST_ALLOCATION));
        }
    }

    /** Makes the frame's array hold at least {@code needed} bytes: doubling, never past the declared size. */
    private void grow(int needed) throws ZmtpException {
        int length = (int) Math.min(size, Math.max(needed, Math.max(2L * body.length, Math.min(size, 256))));
        reserve(length - body.length);
        body = body.length == 0 ? new byte[length] : Arrays.copyOf(body, length);
    }

    private void reserve(long bytes) throws ZmtpException {
        if (!budget.tryReserve(bytes, held)) {
            throw new ZmtpException(new ZmtpFailure.OverBudget(held, bytes, budget.limit()));
        }
        held += bytes;
    }

    private void frameDone(Sink sink) throws ZmtpException {
        byte[] done = body;
        body = null;
        if (command) {
            long charged = done.length;
            held -= charged;
            startedAt = 0;
            try {
                sink.command(done);
            } finally {
                budget.release(charged);
            }
            return;
        }
        frames.add(done);
        messagePayload += done.length;
        if (!more) {
            List<byte[]> message = frames;
            long given = held;
            frames = new ArrayList<>(3);
            messagePayload = 0;
            held = 0;
            startedAt = 0;
            sink.message(message, given);
        }
    }
}
