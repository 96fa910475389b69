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
     * An array whose elements are all integers that fit a long: a {@code List} of {@code Long} to any reader, and
     * {@link #getLong} to one that wants them unboxed (a prompt's thousands of token ids).
     */
    public static final class Integers extends AbstractList<Object> {
        private long[] values;
        private int size;

        private Integers(int capacity) {
            values = new long[capacity];
        }

        private void add(long v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, Math.max(16, size * 2));
            }
            values[size++] = v;
        }

        public long getLong(int i) {
            if (i >= size) {
                throw new IndexOutOfBoundsException(i);
            }
            return values[i];
        }

        @Override
        public Object get(int i) {
            return getLong(i);
        }

        @Override
        public int size() {
            return size;
        }
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

    private MsgpackValues(byte[] bytes, int offset, int length) {
        this.in = MessagePack.newDefaultUnpacker(bytes, offset, length);
        this.source = bytes;
        this.offset = offset;
        this.length = length;
    }

    /** The first value of {@code bytes}; whatever follows it is ignored, as msgpack-c's {@code unpack} does. */
    public static Object first(byte[] bytes) throws Malformed {
        return first(bytes, 0, bytes.length);
    }

    /** The first value of {@code length} bytes of {@code bytes} from {@code offset}. */
    public static Object first(byte[] bytes, int offset, int length) throws Malformed {
        MsgpackValues reader = new MsgpackValues(bytes, offset, length);
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
            case STRING -> string(payload(in.unpackRawStringHeader()));
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
        if (format == MessageFormat.UINT64) {
            BigInteger u = in.unpackBigInteger();
            return u.bitLength() < Long.SIZE ? (Object) u.longValue() : u;
        }
        return in.unpackLong();
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
        Integers ints = n > 0 && fitsLong(in.getNextFormat()) ? new Integers(Math.min(n, 1024)) : null;
        int i = 0;
        for (; ints != null && i < n && fitsLong(in.getNextFormat()); i++) {
            ints.add(in.unpackLong());
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

    /** An integer {@link #integer} reads as a {@code Long}. */
    private static boolean fitsLong(MessageFormat format) {
        return format.getValueType() == ValueType.INTEGER && format != MessageFormat.UINT64;
    }

    private MapValue map(int depth) throws IOException, Malformed {
        int n = in.unpackMapHeader();
        ensureRemaining(2L * n);
        List<Entry> entries = new ArrayList<>(Math.min(n, 16));
        for (int i = 0; i < n; i++) {
            Object key = value(depth + 1);
            entries.add(new Entry(key instanceof String ? key : new NonStringKey(), value(depth + 1)));
        }
        return new MapValue(entries);
    }

    private Bin bin(int declared) throws IOException, Malformed {
        ensureRemaining(declared);
        int at = offset + (int) in.getTotalReadBytes();
        in.readPayloadAsReference(declared);
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
