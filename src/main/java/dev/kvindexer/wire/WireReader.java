package dev.kvindexer.wire;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.core.buffer.ArrayBufferInput;
import org.msgpack.value.ValueType;

/**
 * A reusable {@link MessageUnpacker} over one in-memory payload, plus the few reads msgpack-java does
 * not do the way we need: uint64 ≥ 2^63 as a bit pattern, strings and bins read in place, and
 * container lengths checked against the bytes left (so a forged length cannot make us allocate).
 * Structural damage surfaces as {@link IOException} or msgpack-java's runtime exceptions.
 */
final class WireReader {
    private final ArrayBufferInput input = new ArrayBufferInput(new byte[0]);
    private final MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(input);
    private final byte[] skipScratch = new byte[1024];
    private byte[] payload;
    private int base;
    private int end;

    void reset(byte[] bytes, int offset, int length) throws IOException {
        payload = bytes;
        base = offset;
        end = offset + length;
        input.reset(bytes, offset, length);
        unpacker.reset(input);
    }

    /** Absolute offset in the payload of the next unread byte. */
    int position() {
        return base + (int) unpacker.getTotalReadBytes();
    }

    int remaining() {
        return end - position();
    }

    boolean atEnd() {
        return remaining() <= 0;
    }

    byte[] payload() {
        return payload;
    }

    MessageFormat peekFormat() throws IOException {
        return unpacker.getNextFormat();
    }

    ValueType peekType() throws IOException {
        return unpacker.getNextFormat().getValueType();
    }

    boolean tryNil() throws IOException {
        return unpacker.tryUnpackNil();
    }

    void skip() throws IOException {
        unpacker.skipValue();
    }

    void skip(int count) throws IOException {
        for (int i = 0; i < count; i++) {
            unpacker.skipValue();
        }
    }

    /** Array header whose element count cannot exceed the bytes left (every element takes ≥ 1 byte). */
    int arrayHeader() throws IOException {
        int n = unpacker.unpackArrayHeader();
        if (n > remaining()) {
            throw new IOException("array of " + n + " elements in " + remaining() + " bytes");
        }
        return n;
    }

    /** Map header, bounded like {@link #arrayHeader()}. */
    int mapHeader() throws IOException {
        int n = unpacker.unpackMapHeader();
        if ((long) n * 2 > remaining()) {
            throw new IOException("map of " + n + " entries in " + remaining() + " bytes");
        }
        return n;
    }

    /**
     * The next INTEGER value: its signed value, except that a uint64 is returned as its raw 64-bit
     * pattern (msgpack-java's {@code unpackLong} throws on uint64 ≥ 2^63).
     */
    long integerBits() throws IOException {
        if (unpacker.getNextFormat() != MessageFormat.UINT64) {
            return unpacker.unpackLong();
        }
        int p = position();
        unpacker.skipValue(); // proves the 9 bytes are there
        return readLongBE(p + 1, Long.BYTES);
    }

    /**
     * Reads the next {@code n} values as u32 token ids straight from the payload, if every one is a uint in one of
     * msgpack's forms for at most 32 bits (what engines send), and says whether it did. Otherwise nothing is
     * consumed (only {@code dst} may have been written) and the caller reads value by value, so errors are
     * unchanged. msgpack-java's per-value reads were nearly half the ingest thread's time (BENCHMARKS.md, ZMQ ingest).
     */
    boolean u32Values(int[] dst, int n) throws IOException {
        byte[] b = payload;
        int start = position();
        int p = start;
        int limit = end;
        for (int i = 0; i < n; i++) {
            if (p >= limit) {
                return false;
            }
            int tag = b[p] & 0xff;
            if (tag < 0x80) { // positive fixint
                dst[i] = tag;
                p++;
            } else if (tag == 0xcd && p + 3 <= limit) { // uint16
                dst[i] = (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff);
                p += 3;
            } else if (tag == 0xcc && p + 2 <= limit) { // uint8
                dst[i] = b[p + 1] & 0xff;
                p += 2;
            } else if (tag == 0xce && p + 5 <= limit) { // uint32, kept as its bit pattern
                dst[i] = (int) readLongBE(p + 1, Integer.BYTES);
                p += 5;
            } else {
                return false;
            }
        }
        consume(p - start);
        return true;
    }

    /** Moves the unpacker past bytes already read from the payload; msgpack-java has no public skip of raw bytes. */
    private void consume(int bytes) throws IOException {
        while (bytes > 0) {
            int k = Math.min(bytes, skipScratch.length);
            unpacker.readPayload(skipScratch, 0, k);
            bytes -= k;
        }
    }

    /** Whether a value of this type can be read by {@link #hash()}. */
    static boolean isHash(ValueType type) {
        return type == ValueType.INTEGER || type == ValueType.BINARY;
    }

    /**
     * The next value, an INTEGER or BINARY, as a u64 hash (docs/protocol/events.md#hash-values): uint as is, negative
     * int
     * bit-cast, bin as its last 8 bytes big-endian (shorter ones left-padded with zeros).
     */
    long hash() throws IOException {
        MessageFormat f = unpacker.getNextFormat();
        if (f.getValueType() == ValueType.INTEGER) {
            return integerBits();
        }
        int p = position();
        int headerLen = binHeaderLength(f);
        unpacker.skipValue();
        int dataStart = p + headerLen;
        int len = position() - dataStart;
        int take = Math.min(len, Long.BYTES);
        return readLongBE(dataStart + len - take, take);
    }

    /** The next STRING value decoded as UTF-8 (malformed sequences replaced). */
    String string() throws IOException {
        int p = position();
        int headerLen = strHeaderLength(unpacker.getNextFormat());
        unpacker.skipValue();
        int dataStart = p + headerLen;
        return new String(payload, dataStart, position() - dataStart, StandardCharsets.UTF_8);
    }

    /**
     * Consumes the next STRING value and returns the index of the entry of {@code table} with the
     * same bytes, or -1; nothing is allocated.
     */
    int matchString(byte[][] table) throws IOException {
        int p = position();
        int headerLen = strHeaderLength(unpacker.getNextFormat());
        unpacker.skipValue();
        int dataStart = p + headerLen;
        int len = position() - dataStart;
        for (int i = 0; i < table.length; i++) {
            byte[] candidate = table[i];
            if (candidate.length == len && regionEquals(candidate, dataStart)) {
                return i;
            }
        }
        return -1;
    }

    private boolean regionEquals(byte[] candidate, int at) {
        for (int i = 0; i < candidate.length; i++) {
            if (payload[at + i] != candidate[i]) {
                return false;
            }
        }
        return true;
    }

    private long readLongBE(int at, int count) {
        long v = 0;
        for (int i = 0; i < count; i++) {
            v = (v << 8) | (payload[at + i] & 0xffL);
        }
        return v;
    }

    private static int strHeaderLength(MessageFormat f) throws IOException {
        return switch (f) {
            case FIXSTR -> 1;
            case STR8 -> 2;
            case STR16 -> 3;
            case STR32 -> 5;
            default -> throw new IOException("not a string: " + f);
        };
    }

    private static int binHeaderLength(MessageFormat f) throws IOException {
        return switch (f) {
            case BIN8 -> 2;
            case BIN16 -> 3;
            case BIN32 -> 5;
            default -> throw new IOException("not a bin: " + f);
        };
    }
}
