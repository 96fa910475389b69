package dev.kvindexer.cluster;

import io.netty.buffer.ByteBuf;

/**
 * Follows the lengths inside one event-bus frame as its bytes arrive, before Vert.x parses it. Vert.x reads each
 * string of a message's envelope (codec name, address, reply address, sender, header names and values) and a body's
 * length-prefixed payload by allocating the declared number of bytes first and checking them against the frame only
 * after, so a frame of a few bytes declaring a two-gigabyte address makes the node try to allocate two gigabytes. Here
 * every such length must fit in what is left of its frame, and the codec must be one Vert.x knows.
 */
final class BusMessageCheck {
    /** Vert.x's system codecs, by their wire code: null, ping, String, Buffer, JsonObject, JsonArray, byte[], ... */
    private static final int SYSTEM_CODECS = 18;

    private static final int USER_CODEC = -1;
    /** Codes of the codecs whose body begins with the length of what follows, as Vert.x reads it. */
    private static final int STRING = 2;

    private static final int BYTE_ARRAY = 6;
    private static final int REPLY_EXCEPTION = 15;
    private static final int CLUSTER_SERIALIZABLE = 16;
    private static final int SERIALIZABLE = 17;

    private enum Step {
        VERSION,
        CODEC,
        CODEC_NAME,
        SEND,
        ADDRESS,
        REPLY_ADDRESS,
        SENDER,
        HEADERS,
        HEADER_COUNT,
        HEADER_KEY,
        HEADER_VALUE,
        TO_BODY,
        BODY_LENGTH,
        FAILURE_KIND,
        FAILURE_CODE,
        FAILURE_NULL,
        DONE
    }

    private long frameLength;
    /** Bytes of the frame seen. */
    private long at;

    private Step step;
    private int codec;
    /** An int being read, and how many of its bytes have come. */
    private int value;

    private int valueBytes;
    /** Bytes of a string still to pass before the next step. */
    private long skip;

    private Step afterSkip;
    /** Where the headers section ends (and the body begins), and headers still to read. */
    private long headersEnd;

    private int headersLeft;
    private String problem;

    /** A new frame of {@code length} bytes begins. */
    void begin(long length) {
        frameLength = length;
        at = 0;
        step = Step.VERSION;
        value = 0;
        valueBytes = 0;
        skip = 0;
        problem = null;
    }

    /** Whether the lengths that matter have all been checked: the rest of the frame needs no look. */
    boolean done() {
        return step == Step.DONE;
    }

    /** What was wrong with the frame, once {@link #consume} refused it. */
    String problem() {
        return problem;
    }

    /**
     * Reads bytes {@code from} to {@code to} (exclusive) of {@code buf}, the frame's next ones, until the check is done;
     * returns the index it stopped at, or -1 when a length does not fit ({@link #problem} says which).
     */
    int consume(ByteBuf buf, int from, int to) {
        int i = from;
        while (i < to && step != Step.DONE) {
            if (skip > 0) {
                int n = (int) Math.min(skip, to - i);
                skip -= n;
                at += n;
                i += n;
                if (skip == 0) {
                    enter(afterSkip);
                }
                continue;
            }
            int b = buf.getByte(i++) & 0xff;
            at++;
            if (!take(b)) {
                return -1;
            }
        }
        return i;
    }

    /** Whether the frame, now whole, held everything its envelope promised. */
    boolean completeAtEnd() {
        if (step == Step.DONE) {
            return true;
        }
        problem = "the frame ends inside its message's envelope";
        return false;
    }

    private boolean take(int b) {
        switch (step) {
            case VERSION:
                step = Step.CODEC;
                return true;
            case CODEC:
                codec = (byte) b;
                if (codec == USER_CODEC) {
                    step = Step.CODEC_NAME;
                } else if (codec < 0 || codec >= SYSTEM_CODECS) {
                    return fail("codec " + codec + " is none Vert.x knows");
                } else {
                    step = Step.SEND;
                }
                return true;
            case SEND:
                step = Step.ADDRESS;
                return true;
            case CODEC_NAME:
                return string(b, "codec name", Step.SEND);
            case ADDRESS:
                return string(b, "address", Step.REPLY_ADDRESS);
            case REPLY_ADDRESS:
                return string(b, "reply address", Step.SENDER);
            case SENDER:
                return string(b, "sender", Step.HEADERS);
            case HEADERS:
                if (!intByte(b)) {
                    return true;
                }
                // The length counts its own four bytes; four alone means no headers.
                long left = frameLength - at + 4;
                if (value < 4 || value > left) {
                    return fail("headers of " + value + " bytes where " + left + " remain");
                }
                headersEnd = at - 4 + value;
                enter(value == 4 ? Step.TO_BODY : Step.HEADER_COUNT);
                return true;
            case HEADER_COUNT:
                if (!intByte(b)) {
                    return true;
                }
                if (value < 0 || value > (headersEnd - at) / 8) {
                    return fail(value + " headers in " + (headersEnd - at) + " bytes");
                }
                headersLeft = value;
                enter(headersLeft == 0 ? Step.TO_BODY : Step.HEADER_KEY);
                return true;
            case HEADER_KEY:
                return string(b, "header name", headersEnd, Step.HEADER_VALUE);
            case HEADER_VALUE:
                if (!intByte(b)) {
                    return true;
                }
                headersLeft--;
                return passing(value, "header value", headersEnd, headersLeft == 0 ? Step.TO_BODY : Step.HEADER_KEY);
            case BODY_LENGTH:
                // Once the body's length fits, the rest of the frame needs no look.
                return !intByte(b) || fits(value, frameLength, "body") && next(Step.DONE);
            case FAILURE_KIND:
                return next(Step.FAILURE_CODE);
            case FAILURE_CODE:
                return !intByte(b) || next(Step.FAILURE_NULL);
            case FAILURE_NULL:
                // Zero means no message; anything else is followed by the message's length and bytes.
                return b == 0 ? next(Step.DONE) : next(Step.BODY_LENGTH);
            default:
                throw new IllegalStateException("no byte is read in step " + step);
        }
    }

    /** The body begins where the headers end; whether its first bytes need a look depends on the codec. */
    private void toBody() {
        skipThen(headersEnd - at, bodyStep());
    }

    private void enter(Step s) {
        if (s == Step.TO_BODY) {
            toBody();
        } else {
            step = s;
        }
    }

    private Step bodyStep() {
        if (codec >= STRING && codec <= BYTE_ARRAY || codec == CLUSTER_SERIALIZABLE || codec == SERIALIZABLE) {
            return Step.BODY_LENGTH;
        }
        return codec == REPLY_EXCEPTION ? Step.FAILURE_KIND : Step.DONE;
    }

    /** A length read, then that many bytes to pass, all within the frame. */
    private boolean string(int b, String what, Step then) {
        return string(b, what, frameLength, then);
    }

    /** A length read, then that many bytes to pass, all before {@code end}. */
    private boolean string(int b, String what, long end, Step then) {
        return !intByte(b) || passing(value, what, end, then);
    }

    /** {@code length} bytes to pass before {@code then}, if they end by {@code end}. */
    private boolean passing(int length, String what, long end, Step then) {
        if (!fits(length, end, what)) {
            return false;
        }
        skipThen(length, then);
        return true;
    }

    private boolean fits(int length, long end, String what) {
        if (length < 0 || length > end - at) {
            return fail("a " + what + " of " + length + " bytes where " + Math.max(0, end - at) + " remain");
        }
        return true;
    }

    private void skipThen(long n, Step then) {
        if (n > 0) {
            skip = n;
            afterSkip = then;
        } else {
            enter(then);
        }
    }

    private boolean next(Step s) {
        step = s;
        return true;
    }

    /** Adds one byte to the big-endian int being read; true once its four bytes are in {@link #value}. */
    private boolean intByte(int b) {
        value = valueBytes == 0 ? b : (value << 8) | b;
        if (++valueBytes < 4) {
            return false;
        }
        valueBytes = 0;
        return true;
    }

    private boolean fail(String why) {
        problem = why;
        return false;
    }
}
