package dev.kvindexer.selectservice.replication;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageUnpacker;

/**
 * Reads a replica peer's msgpack the way rmp-serde wrote it, trusting none of it: every count a map, array or string
 * declares is checked against the bytes of the message before anything is allocated for it, nesting is bounded, and
 * any integer width is taken (a u64 past 2^63 arrives as {@code uint64}). Shared by the codecs of the mesh's topics.
 */
class BoundedUnpacker {
    private static final int MAX_DEPTH = 8;

    protected final MessageUnpacker u;
    protected final int size;

    BoundedUnpacker(MessageUnpacker u, int size) {
        this.u = u;
        this.size = size;
    }

    /** Writes a u64 in rmp's smallest unsigned form. */
    static void packU64(MessageBufferPacker p, long v) throws IOException {
        if (v >= 0) {
            p.packLong(v);
        } else {
            p.packBigInteger(new BigInteger(Long.toUnsignedString(v)));
        }
    }

    int mapHeader() throws IOException {
        int n = u.unpackMapHeader();
        if (n > size) {
            throw new IllegalArgumentException("a map declares " + n + " entries");
        }
        return n;
    }

    long u64() throws IOException {
        MessageFormat f = u.getNextFormat();
        if (f == MessageFormat.UINT64) {
            return u.unpackBigInteger().longValue();
        }
        long v = u.unpackLong();
        if (v < 0) {
            throw new IllegalArgumentException("negative value " + v + " for u64");
        }
        return v;
    }

    long u32() throws IOException {
        long v = u64();
        if (v > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("value " + v + " is past u32");
        }
        return v;
    }

    String optionalString() throws IOException {
        return u.tryUnpackNil() ? null : str();
    }

    /** A string whose declared length is checked against the message before its bytes are read. */
    String str() throws IOException {
        int n = u.unpackRawStringHeader();
        if (n > size) {
            throw new IllegalArgumentException("a string declares " + n + " bytes");
        }
        return new String(u.readPayload(n), StandardCharsets.UTF_8);
    }

    void skip() throws IOException {
        skip(0);
    }

    private void skip(int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("nesting deeper than " + MAX_DEPTH);
        }
        MessageFormat f = u.getNextFormat();
        switch (f.getValueType()) {
            case ARRAY -> {
                int n = u.unpackArrayHeader();
                if (n > size) {
                    throw new IllegalArgumentException("an array declares " + n + " entries");
                }
                for (int i = 0; i < n; i++) {
                    skip(depth + 1);
                }
            }
            case MAP -> {
                int n = mapHeader();
                for (int i = 0; i < 2 * n; i++) {
                    skip(depth + 1);
                }
            }
            default -> u.skipValue();
        }
    }
}
