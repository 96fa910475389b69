package dev.kvindexer.web;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

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

    /** Index of the array's '[' and of its ']'. */
    final int open;

    final int close;
    final int[] tokens;

    private RawTokenIds(int open, int close, int[] tokens) {
        this.open = open;
        this.close = close;
        this.tokens = tokens;
    }

    /** The body with the array emptied to {@code []}: what remains for the general parser. */
    byte[] withoutTokens(byte[] body) {
        byte[] rest = new byte[body.length - (close - open - 1)];
        System.arraycopy(body, 0, rest, 0, open + 1);
        System.arraycopy(body, close, rest, open + 1, body.length - close);
        return rest;
    }

    static RawTokenIds find(byte[] b) {
        int n = b.length;
        int i = skipSpace(b, 0);
        if (i == n || b[i] != '{') {
            return null;
        }
        RawTokenIds found = null;
        int depth = 0;
        while (i < n) {
            byte c = b[i];
            if (c == '"') {
                int start = i + 1;
                boolean escaped = false;
                i = start;
                while (i < n && b[i] != '"') {
                    if (b[i] == '\\') {
                        escaped = true;
                        i++;
                    }
                    i++;
                }
                if (i >= n) {
                    return null; // unterminated string
                }
                int end = i++;
                if (depth != 1) {
                    continue;
                }
                int after = skipSpace(b, i);
                if (after == n || b[after] != ':') {
                    continue; // a value, not a key
                }
                if (escaped) {
                    return null; // an escaped key could spell token_ids
                }
                if (!isKey(b, start, end)) {
                    continue;
                }
                if (found != null) {
                    return null; // a repeated key: the general parser decides which one counts
                }
                int open = skipSpace(b, after + 1);
                if (open == n || b[open] != '[') {
                    return null;
                }
                found = readArray(b, open);
                if (found == null) {
                    return null;
                }
                i = found.close + 1;
            } else {
                if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                }
                i++;
            }
        }
        return found;
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
    private static RawTokenIds readArray(byte[] b, int open) {
        int n = b.length;
        int[] out = new int[Math.max(16, (n - open) / 6)];
        int count = 0;
        int j = skipSpace(b, open + 1);
        if (j < n && b[j] == ']') {
            return new RawTokenIds(open, j, new int[0]);
        }
        while (j < n) {
            if (count == out.length) {
                out = java.util.Arrays.copyOf(out, count * 2);
            }
            if (j + Long.BYTES <= n) {
                // The common case in one 8-byte word: up to 7 digits, then a comma and perhaps one space. Reading the
                // separator from the word, not from the array, keeps one load on the path from one token to the next.
                long w = (long) LONGS.get(b, j);
                long x = w - 0x3030_3030_3030_3030L;
                // A non-digit byte minus '0' is 10 or more; the borrow or carry it may cause only reaches later bytes.
                int digits =
                        Long.numberOfTrailingZeros((x | (x + 0x7676_7676_7676_7676L)) & 0x8080_8080_8080_8080L) >>> 3;
                if (digits != 0
                        && digits != Long.BYTES
                        && (digits == 1 || (w & 0xFF) != '0')
                        && ((w >>> (digits << 3)) & 0xFF) == ',') {
                    out[count++] = (int) digitsValue(x, digits);
                    j += digits + 1;
                    if (digits < 7 && ((w >>> ((digits + 1) << 3)) & 0xFF) == ' ') {
                        j++;
                    }
                    continue;
                }
            }
            // Anything else, one byte at a time: spaces, 8 digits or more, the last number, the end of the body.
            j = skipSpace(b, j);
            int d = j < n ? b[j] - '0' : -1;
            if (d < 0 || d > 9) {
                return null;
            }
            long v = d;
            int start = j++;
            if (d != 0) { // a leading zero stands alone, as JSON says
                while (j < n && (d = b[j] - '0') >= 0 && d <= 9) {
                    if (j - start == 10) {
                        return null;
                    }
                    v = v * 10 + d;
                    j++;
                }
            }
            if (v > U32_MAX) {
                return null;
            }
            out[count++] = (int) v;
            j = skipSpace(b, j);
            if (j == n) {
                return null;
            }
            if (b[j] == ']') {
                return new RawTokenIds(open, j, count == out.length ? out : java.util.Arrays.copyOf(out, count));
            }
            if (b[j] != ',') {
                return null; // a fraction, an exponent, another digit after 0, or anything else
            }
            j++;
        }
        return null;
    }

    /** The value of the first {@code digits} (1 to 7) bytes of a word of digits already less '0'. */
    private static long digitsValue(long x, int digits) {
        // The digits move to the top of the word; the zero bytes below them read as leading zeros.
        long v = x << ((Long.BYTES - digits) * 8);
        v = (v * 10 + (v >>> 8)) & 0x00FF_00FF_00FF_00FFL;
        v = (v * 100 + (v >>> 16)) & 0x0000_FFFF_0000_FFFFL;
        return (v * 10000 + (v >>> 32)) & 0xFFFF_FFFFL;
    }

    private static int skipSpace(byte[] b, int i) {
        while (i < b.length) {
            byte c = b[i];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                break;
            }
            i++;
        }
        return i;
    }
}
