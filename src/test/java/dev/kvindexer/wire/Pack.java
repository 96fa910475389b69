package dev.kvindexer.wire;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** Test helper: packs nested Java values (List, Map, String, Number, byte[], null) as msgpack. */
public final class Pack {
    /** A raw uint64 to pack with the {@code cf} format whatever its value. */
    public record U64(long bits) {}

    /** Bytes written as they are, for value forms the packer would not choose (e.g. an int8 for 5). */
    public record Raw(byte[] bytes) {}

    private Pack() {}

    public static byte[] of(Object value) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            write(p, value);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A batch {@code [1.5, events, rank]}. */
    public static byte[] batch(Object rank, Object... events) {
        return of(java.util.Arrays.asList(1.5, java.util.Arrays.asList(events), rank));
    }

    private static void write(MessageBufferPacker p, Object v) throws IOException {
        if (v == null) {
            p.packNil();
        } else if (v instanceof U64 u) {
            p.addPayload(new byte[] {(byte) 0xcf});
            byte[] b = new byte[8];
            long bits = u.bits();
            for (int i = 7; i >= 0; i--) {
                b[i] = (byte) bits;
                bits >>>= 8;
            }
            p.addPayload(b);
        } else if (v instanceof Raw r) {
            p.addPayload(r.bytes());
        } else if (v instanceof String s) {
            p.packString(s);
        } else if (v instanceof Double d) {
            p.packDouble(d);
        } else if (v instanceof Boolean b) {
            p.packBoolean(b);
        } else if (v instanceof Number n) {
            p.packLong(n.longValue());
        } else if (v instanceof byte[] b) {
            p.packBinaryHeader(b.length);
            p.addPayload(b);
        } else if (v instanceof java.util.List<?> l) {
            p.packArrayHeader(l.size());
            for (Object o : l) {
                write(p, o);
            }
        } else if (v instanceof Map<?, ?> m) {
            p.packMapHeader(m.size());
            for (Map.Entry<?, ?> e : m.entrySet()) {
                write(p, e.getKey());
                write(p, e.getValue());
            }
        } else {
            throw new IllegalArgumentException("cannot pack " + v.getClass());
        }
    }
}
