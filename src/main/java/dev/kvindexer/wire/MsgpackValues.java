package dev.kvindexer.wire;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Reads one msgpack value into Java values that keep the distinctions a strict contract makes (the C++ Mooncake
 * Conductor's, docs/api/mooncake-cpp.md#common-rules, docs/protocol/events.md#c-conductor-events): nil apart from absent ({@link Nil}), str apart from bin ({@code String} or
 * {@link InvalidUtf8} against {@link Bin}), i64 apart from larger uints ({@code Long} against {@code BigInteger}),
 * int apart from float ({@code Double}), maps in wire order ({@link MapValue}), arrays as {@code List} (an array of
 * integers that fit a long as {@link Integers}, unboxed for readers that know it). Every declared
 * length is checked against the bytes left before anything is allocated, and values nest at most {@link #MAX_DEPTH}
 * deep: no field of those contracts nests more than three levels.
 */
public final class MsgpackValues {
    public static final int MAX_DEPTH = 32;

    /** msgpack nil. */
    public enum Nil {
        INSTANCE
    }

    /** A str whose bytes are not UTF-8 (msgpack-c does not check; strict readers refuse it where it matters). */
    public record InvalidUtf8(byte[] bytes) {}

    /**
     * A bin, as a window of the bytes read rather than a copy: a prompt's token ids are decoded straight from the
     * request body. Valid while those bytes are.
     */
    public record Bin(byte[] source, int offset, int length) {}

    /** A map key that is not a str. */
    public record NonStringKey() {}

    /** An extension value, which no field of these contracts accepts. */
    public record Extension() {}

    /** One map entry: the key is a {@link String} or a {@link NonStringKey}. */
    public record Entry(Object key, Object value) {}

    /** A map, its entries in wire order. */
    public record MapValue(List<Entry> entries) {
        /** The value of the first entry named {@code name}, or null when there is none. */
        public Object get(String name) {
            for (Entry e : entries) {
                if (name.equals(e.key())) {
                    return e.value();
                }
            }
            return null;
        }

        public boolean has(String name) {
            for (Entry e : entries) {
                if (name.equals(e.key())) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * An array whose elements are all integers: a {@code List} of {@code Long} (and of {@code BigInteger} for a uint
     * above {@code Long.MAX_VALUE}) to any reader, and {@link #getLong} to one that wants them unboxed (a prompt's
     * thousands of token ids, a batch's 64-bit block hashes).
     */
    public static final class Integers extends AbstractList<Object> {
        private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(Long.SIZE);

        private long[] values;
        private int size;
        /** One bit an element, set where it is a uint above {@code Long.MAX_VALUE}; null while there is none. */
        private long[] aboveLong;

        private Integers(int capacity) {
            values = new long[capacity];
        }

        private void add(long v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, Math.max(16, size * 2));
            }
            values[size++] = v;
        }

        private void addAboveLong(long lowBits) {
            if (aboveLong == null) {
                aboveLong = new long[Math.max(1, (values.length + 63) >>> 6)];
            }
            if ((size >>> 6) >= aboveLong.length) {
                aboveLong = Arrays.copyOf(aboveLong, Math.max(aboveLong.length * 2, (size >>> 6) + 1));
            }
            aboveLong[size >>> 6] |= 1L << size;
            add(lowBits);
        }

        /** The element's value, or for a uint above {@code Long.MAX_VALUE} ({@link #aboveLong}) its low 64 bits. */
        public long getLong(int i) {
            if (i >= size) {
                throw new IndexOutOfBoundsException(i);
            }
            return values[i];
        }

        /** Whether the element is a uint above {@code Long.MAX_VALUE}, which {@link #get} answers as a BigInteger. */
        public boolean aboveLong(int i) {
            if (i >= size) {
                throw new IndexOutOfBoundsException(i);
            }
            return aboveLong != null && (aboveLong[i >>> 6] & (1L << i)) != 0;
        }

        @Override
        public Object get(int i) {
            long v = getLong(i);
            return aboveLong(i) ? BigInteger.valueOf(v).add(TWO_64) : (Object) v;
        }

        @Override
        public int size() {
            return size;
        }
    }

    /**
     * The value of a map entry the caller named as one to check but not build: its bytes were read as any value's
     * are (declared lengths, depth), nothing was made of them.
     */
    public enum Unread {
        INSTANCE
    }

    /** Bytes that hold no whole msgpack value within the bounds. */
    public static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    private final MessageUnpacker in;
    private final byte[] source;
    private final int offset;
    private final long length;
    private final Set<String> unread;

    private MsgpackValues(byte[] bytes, int offset, int length, Set<String> unread) {
        this.in = MessagePack.newDefaultUnpacker(bytes, offset, length);
        this.source = bytes;
        this.offset = offset;
        this.length = length;
        this.unread = unread;
    }

    /** The first value of {@code bytes}; whatever follows it is ignored, as msgpack-c's {@code unpack} does. */
    public static Object first(byte[] bytes) throws Malformed {
        return first(bytes, 0, bytes.length);
    }

    /**
     * The first value of {@code bytes}, where the value of a map entry whose key is in {@code unread} is checked but
     * not built: it reads as {@link Unread}, for a reader that asks only whether the entry is there.
     */
    public static Object first(byte[] bytes, Set<String> unread) throws Malformed {
        return first(bytes, 0, bytes.length, unread);
    }

    /** The first value of {@code length} bytes of {@code bytes} from {@code offset}. */
    public static Object first(byte[] bytes, int offset, int length) throws Malformed {
        return first(bytes, offset, length, Set.of());
    }

    private static Object first(byte[] bytes, int offset, int length, Set<String> unread) throws Malformed {
        MsgpackValues reader = new MsgpackValues(bytes, offset, length, unread);
        try (MessageUnpacker in = reader.in) {
            if (!in.hasNext()) {
                throw new Malformed("no value");
            }
            return reader.value(0);
        } catch (IOException | RuntimeException e) {
            throw new Malformed(e.getMessage());
        }
    }

    private Object value(int depth) throws IOException, Malformed {
        if (depth > MAX_DEPTH) {
            throw new Malformed("values nest deeper than " + MAX_DEPTH + " levels");
        }
        MessageFormat format = in.getNextFormat();
        return switch (format.getValueType()) {
            case NIL -> {
                in.unpackNil();
                yield Nil.INSTANCE;
            }
            case BOOLEAN -> in.unpackBoolean();
            case INTEGER -> integer(format);
            case FLOAT -> in.unpackDouble();
            case STRING -> {
                int declared = in.unpackRawStringHeader();
                String ascii = stringOrAscii(declared);
                yield ascii != null ? ascii : string(payload(declared));
            }
            case BINARY -> bin(in.unpackBinaryHeader());
            case ARRAY -> array(depth);
            case MAP -> map(depth);
            case EXTENSION -> {
                bin(in.unpackExtensionTypeHeader().getLength()); // skipped in place, not copied
                yield new Extension();
            }
        };
    }

    private Object integer(MessageFormat format) throws IOException {
        return format == MessageFormat.UINT64 && aboveLong() ? in.unpackBigInteger() : (Object) in.unpackLong();
    }

    /**
     * Whether the next value, a uint64 whose 8 bytes are all there, is above {@code Long.MAX_VALUE}: the top bit of
     * its first payload byte. A truncated one is the unpacker's to refuse.
     */
    private boolean aboveLong() {
        long at = offset + in.getTotalReadBytes() + 1;
        return at + Long.BYTES <= offset + length && source[(int) at] < 0;
    }

    /** The 64 bits of the uint64 whose format byte is next, which {@link #aboveLong} has found there whole. */
    private long uint64Bits() {
        int at = offset + (int) in.getTotalReadBytes() + 1;
        long bits = 0;
        for (int i = at; i < at + Long.BYTES; i++) {
            bits = (bits << 8) | (source[i] & 0xffL);
        }
        return bits;
    }

    /** A str; most are ASCII (every key of these contracts), made without a decoder. */
    private String stringOrAscii(int declared) throws IOException, Malformed {
        ensureRemaining(declared);
        int at = offset + (int) in.getTotalReadBytes();
        for (int i = at; i < at + declared; i++) {
            if (source[i] < 0) {
                return null;
            }
        }
        in.readPayloadAsReference(declared);
        return new String(source, at, declared, StandardCharsets.ISO_8859_1);
    }

    private static Object string(byte[] utf8) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(utf8))
                    .toString();
        } catch (CharacterCodingException e) {
            return new InvalidUtf8(utf8);
        }
    }

    private List<Object> array(int depth) throws IOException, Malformed {
        int n = in.unpackArrayHeader();
        ensureRemaining(n);
        // Integers stay unboxed for as long as the array holds only them; the first other element boxes what came.
        Integers ints = n > 0 && isInteger(in.getNextFormat()) ? new Integers(Math.min(n, 1024)) : null;
        int i = 0;
        for (MessageFormat f; ints != null && i < n && isInteger(f = in.getNextFormat()); i++) {
            if (f == MessageFormat.UINT64 && aboveLong()) {
                // its 64 bits as they stand, without the BigInteger the unpacker would make of them
                ints.addAboveLong(uint64Bits());
                in.skipValue();
            } else {
                ints.add(in.unpackLong());
            }
        }
        if (ints != null && i == n) {
            return ints;
        }
        List<Object> out = new ArrayList<>(Math.min(n, Math.max(16, i + 16)));
        if (ints != null) {
            out.addAll(ints);
        }
        for (; i < n; i++) {
            out.add(value(depth + 1));
        }
        return out;
    }

    private static boolean isInteger(MessageFormat format) {
        return format.getValueType() == ValueType.INTEGER;
    }

    private MapValue map(int depth) throws IOException, Malformed {
        int n = in.unpackMapHeader();
        ensureRemaining(2L * n);
        List<Entry> entries = new ArrayList<>(Math.min(n, 16));
        for (int i = 0; i < n; i++) {
            Object key = value(depth + 1);
            if (key instanceof String name && unread.contains(name)) {
                skip(depth + 1);
                entries.add(new Entry(key, Unread.INSTANCE));
            } else {
                entries.add(new Entry(key instanceof String ? key : new NonStringKey(), value(depth + 1)));
            }
        }
        return new MapValue(entries);
    }

    /** Reads past one value as {@link #value} would read it, refusing what it refuses, and makes nothing of it. */
    private void skip(int depth) throws IOException, Malformed {
        if (depth > MAX_DEPTH) {
            throw new Malformed("values nest deeper than " + MAX_DEPTH + " levels");
        }
        MessageFormat format = in.getNextFormat();
        switch (format.getValueType()) {
            case STRING -> skipPayload(in.unpackRawStringHeader());
            case BINARY -> skipPayload(in.unpackBinaryHeader());
            case EXTENSION -> skipPayload(in.unpackExtensionTypeHeader().getLength());
            case ARRAY -> {
                int n = in.unpackArrayHeader();
                ensureRemaining(n);
                for (int i = 0; i < n; i++) {
                    skip(depth + 1);
                }
            }
            case MAP -> {
                int n = in.unpackMapHeader();
                ensureRemaining(2L * n);
                for (int i = 0; i < 2 * n; i++) {
                    skip(depth + 1);
                }
            }
            default -> in.skipValue();
        }
    }

    private void skipPayload(int declared) throws IOException, Malformed {
        ensureRemaining(declared);
        in.readPayloadAsReference(declared);
    }

    private Bin bin(int declared) throws IOException, Malformed {
        int at = offset + (int) in.getTotalReadBytes();
        skipPayload(declared);
        return new Bin(source, at, declared);
    }

    private byte[] payload(int declared) throws IOException, Malformed {
        ensureRemaining(declared);
        return in.readPayload(declared);
    }

    private void ensureRemaining(long needed) throws Malformed {
        if (needed > length - in.getTotalReadBytes()) {
            throw new Malformed(needed + " bytes declared with " + (length - in.getTotalReadBytes()) + " left");
        }
    }
}
