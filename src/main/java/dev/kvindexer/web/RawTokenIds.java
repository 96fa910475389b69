package dev.kvindexer.web;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Finds the root object's {@code token_ids} array in the raw bytes of a JSON body and reads it with a plain digit
 * loop, a few ns a token where a general JSON tokenizer takes tens. It answers only for the shape it can read
 * exactly (one unescaped {@code token_ids} key in the root object, its array holding only plain u32 literals);
 * anything else is null, and the caller parses the body the general way, errors and all.
 */
final class RawTokenIds {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final byte[] KEY = {'t', 'o', 'k', 'e', 'n', '_', 'i', 'd', 's'};
    private static final long U32_MAX = 0xFFFF_FFFFL;
    private static final long ZEROS = 0x3030_3030_3030_3030L;
    private static final long TO_HIGH_BIT = 0x7676_7676_7676_7676L;
    private static final long HIGH_BITS = 0x8080_8080_8080_8080L;

    /** {@link #token} found no u32 literal followed by a separator: the array is not for this reader. */
    private static final int FAIL = -1;

    /** Index of the array's '[' and of its ']', in the body's array. */
    final int open;

    final int close;
    final int[] tokens;

    private RawTokenIds(int open, int close, int[] tokens) {
        this.open = open;
        this.close = close;
        this.tokens = tokens;
    }

    /** The body {@code b[from, to)} with the array emptied to {@code []}: what remains for the general parser. */
    byte[] withoutTokens(byte[] b, int from, int to) {
        byte[] rest = new byte[(to - from) - (close - open - 1)];
        System.arraycopy(b, from, rest, 0, open + 1 - from);
        System.arraycopy(b, close, rest, open + 1 - from, to - close);
        return rest;
    }

    static RawTokenIds find(byte[] b) {
        return find(b, 0, b.length);
    }

    /** The array in body {@code b[from, to)}, or null. */
    static RawTokenIds find(byte[] b, int from, int to) {
        int n = to;
        int i = skipSpace(b, from, n);
        if (i == n || b[i] != '{') {
            return null;
        }
        RawTokenIds found = null;
        int depth = 0;
        while (i < n) {
            byte c = b[i];
            if (c != '"') {
                if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                }
                i++;
                continue;
            }
            int start = i + 1;
            int end = stringEnd(b, start, n);
            if (end < 0) {
                return null; // unterminated string
            }
            i = end + 1;
            if (depth != 1) {
                continue;
            }
            int after = skipSpace(b, i, n);
            if (after == n || b[after] != ':') {
                continue; // a value, not a key
            }
            if (hasEscape(b, start, end)) {
                return null; // an escaped key could spell token_ids
            }
            if (!isKey(b, start, end)) {
                continue;
            }
            if (found != null) {
                return null; // a repeated key: the general parser decides which one counts
            }
            found = arrayAt(b, skipSpace(b, after + 1, n), n);
            if (found == null) {
                return null;
            }
            i = found.close + 1;
        }
        return found;
    }

    /** The closing quote of the string whose first byte is at {@code start}, or -1 when it has none. */
    private static int stringEnd(byte[] b, int start, int n) {
        int i = start;
        while (i < n && b[i] != '"') {
            if (b[i] == '\\') {
                i++;
            }
            i++;
        }
        return i >= n ? -1 : i;
    }

    private static boolean hasEscape(byte[] b, int start, int end) {
        for (int i = start; i < end; i++) {
            if (b[i] == '\\') {
                return true;
            }
        }
        return false;
    }

    /** The array opening at {@code open}, or null when there is none there or it is not one of token ids. */
    private static RawTokenIds arrayAt(byte[] b, int open, int n) {
        if (open == n || b[open] != '[') {
            return null;
        }
        return readArray(b, open, n);
    }

    private static boolean isKey(byte[] b, int start, int end) {
        if (end - start != KEY.length) {
            return false;
        }
        for (int k = 0; k < KEY.length; k++) {
            if (b[start + k] != KEY[k]) {
                return false;
            }
        }
        return true;
    }

    /** {@code [ u32 (, u32)* ]} with JSON whitespace, or null. */
    private static RawTokenIds readArray(byte[] b, int open, int n) {
        int j = skipSpace(b, open + 1, n);
        if (j < n && b[j] == ']') {
            return new RawTokenIds(open, j, new int[0]);
        }
        int[] out = new int[Math.max(16, (n - open) / 6)];
        int count = 0;
        while (true) {
            if (count == out.length) {
                out = Arrays.copyOf(out, count * 2);
            }
            long run = commonTokens(b, j, n - Long.BYTES, out, count);
            j = (int) (run >>> 32);
            if ((count = (int) run) == out.length) {
                continue;
            }
            int r = token(b, j, n, out, count++);
            if (r < FAIL) {
                return new RawTokenIds(open, -r - 2, count == out.length ? out : Arrays.copyOf(out, count));
            }
            if (r == FAIL) {
                return null;
            }
            j = r;
        }
    }

    /**
     * Reads tokens of the common form, each in one 8-byte word: up to 7 digits, a comma and perhaps one space; stops
     * at anything else, at {@code lastWord} or with {@code out} full. Answers where it stopped and the count, as
     * {@code j << 32 | count}. The loop is bound by the instructions a token takes, not by waits, so its tests are
     * folded into as few as they can be, and it is a method of its own so the compiler sees nothing else.
     */
    private static long commonTokens(byte[] b, int j, int lastWord, int[] out, int count) {
        int room = out.length;
        while (j <= lastWord && count < room) {
            long w = (long) LONGS.get(b, j);
            long x = w - ZEROS;
            // A non-digit byte minus '0' is 10 or more; the borrow or carry it may cause only reaches later bytes.
            int d = Long.numberOfTrailingZeros((x | (x + TO_HIGH_BIT)) & HIGH_BITS) >>> 3;
            long separator = w >>> (d << 3);
            if (Integer.compareUnsigned(d - 1, Long.BYTES - 1) >= 0 // no digit, or 8 of them
                    || (separator & 0xFF) != ','
                    || ((x & 0xFF) == 0 && d != 1)) { // a leading zero stands alone, as JSON says
                break;
            }
            out[count++] = digitsValue(x, d);
            // With 7 digits the space is past the word and the shift has left a zero there.
            j += d + 1 + ((separator & 0xFF00) == 0x2000 ? 1 : 0);
        }
        return (long) j << 32 | count;
    }

    /**
     * Reads the token at {@code j} (after any whitespace) into {@code out[at]}, one byte at a time: spaces, 8 digits
     * or more, the last number, the end of the body. Answers the index after its comma; {@code -(close + 2)} when
     * the array's ']' at {@code close} follows it; FAIL for anything else.
     */
    private static int token(byte[] b, int j, int n, int[] out, int at) {
        j = skipSpace(b, j, n);
        int d = j < n ? b[j] - '0' : -1;
        if (d < 0 || d > 9) {
            return FAIL;
        }
        long v = d;
        int start = j++;
        if (d != 0) { // a leading zero stands alone, as JSON says
            while (j < n && (d = b[j] - '0') >= 0 && d <= 9) {
                if (j - start == 10) {
                    return FAIL;
                }
                v = v * 10 + d;
                j++;
            }
        }
        if (v > U32_MAX) {
            return FAIL;
        }
        out[at] = (int) v;
        j = skipSpace(b, j, n);
        if (j == n) {
            return FAIL;
        }
        if (b[j] == ']') {
            return -(j + 2);
        }
        if (b[j] != ',') {
            return FAIL; // a fraction, an exponent, another digit after 0, or anything else
        }
        return j + 1;
    }

    /** The value of the first {@code digits} (1 to 7) bytes of a word of digits already less '0'. */
    private static int digitsValue(long x, int digits) {
        // The digits move to the top of the word; the zero bytes below them read as leading zeros.
        long v = x << ((Long.BYTES - digits) << 3);
        v = (v * 10 + (v >>> 8)) & 0x00FF_00FF_00FF_00FFL;
        v = (v * 100 + (v >>> 16)) & 0x0000_FFFF_0000_FFFFL;
        return (int) (v * 10000 + (v >>> 32));
    }

    private static int skipSpace(byte[] b, int i, int n) {
        while (i < n) {
            byte c = b[i];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                break;
            }
            i++;
        }
        return i;
    }
}
