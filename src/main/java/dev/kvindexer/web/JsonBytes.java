package dev.kvindexer.web;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A JSON text written as ASCII bytes, numbers straight into the buffer: an answer of a thousand instances prints two
 * thousand ids and four thousand counts, and a string per number, a StringBuilder and its encoding to bytes would be
 * most of what rendering it costs. Callers write only ASCII: structure, member names and numbers.
 */
public final class JsonBytes {
    /** {@code POWERS[k]} is 10^k: a number of n digits is below {@code POWERS[n]}. */
    private static final long[] POWERS = new long[19];
    /** "00" to "99". */
    private static final byte[] PAIRS = new byte[200];

    static {
        long p = 1;
        for (int k = 0; k < POWERS.length; k++) {
            POWERS[k] = p;
            p *= 10;
        }
        for (int r = 0; r < 100; r++) {
            PAIRS[2 * r] = (byte) ('0' + r / 10);
            PAIRS[2 * r + 1] = (byte) ('0' + r % 10);
        }
    }

    private byte[] buf;
    private int len;

    public JsonBytes(int capacity) {
        buf = new byte[Math.max(capacity, 16)];
    }

    /** Appends {@code ascii} as it is: structure and member names. */
    public JsonBytes raw(String ascii) {
        int n = ascii.length();
        room(n);
        ascii.getBytes(0, n, buf, len);
        len += n;
        return this;
    }

    public JsonBytes raw(char c) {
        room(1);
        buf[len++] = (byte) c;
        return this;
    }

    public JsonBytes number(long v) {
        if (v < 0) {
            if (v == Long.MIN_VALUE) {
                return raw("-9223372036854775808");
            }
            raw('-');
            v = -v;
        }
        return digits(v);
    }

    /** {@code v} read as an unsigned 64-bit number, as worker ids are printed. */
    public JsonBytes unsigned(long v) {
        if (v >= 0) {
            return digits(v);
        }
        long q = Long.divideUnsigned(v, 10);
        digits(q);
        return raw((char) ('0' + (v - q * 10)));
    }

    /** {@code v >= 0}: its length from a table of powers of ten, then two digits a step from the end. */
    private JsonBytes digits(long v) {
        int n = 1;
        while (n < POWERS.length && v >= POWERS[n]) {
            n++;
        }
        room(n);
        byte[] b = buf;
        int i = len + n;
        while (v >= 100) {
            long q = v / 100;
            int r = (int) (v - q * 100);
            b[--i] = PAIRS[2 * r + 1];
            b[--i] = PAIRS[2 * r];
            v = q;
        }
        if (v >= 10) {
            b[--i] = PAIRS[2 * (int) v + 1];
            b[--i] = PAIRS[2 * (int) v];
        } else {
            b[--i] = (byte) ('0' + v);
        }
        len += n;
        return this;
    }

    private void room(int n) {
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(len + n, buf.length * 2));
        }
    }

    public Buffer toBuffer() {
        return Buffer.buffer(len).appendBytes(buf, 0, len);
    }

    @Override
    public String toString() {
        return new String(buf, 0, len, StandardCharsets.US_ASCII);
    }
}
