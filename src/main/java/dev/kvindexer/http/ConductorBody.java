package dev.kvindexer.http;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * A C++ Mooncake Conductor request body (SPEC §11.6): the first msgpack value (trailing bytes are ignored, as
 * msgpack-c's {@code unpack} does), which must be a map, with its entries in wire order and its values in the types
 * the contract tells apart: nil from absent, str from bin, int from float, i64 from larger uints. Every declared
 * length is checked against the bytes left before anything is allocated, and values nest at most
 * {@link #MAX_DEPTH} deep (no field of the contract nests more than twice).
 */
final class ConductorBody {
    static final int MAX_DEPTH = 32;

    /** msgpack nil, which the contract tells apart from an absent key. */
    enum Nil { INSTANCE }

    /** A str whose bytes are not UTF-8 (msgpack-c does not check; the contract refuses it where it matters). */
    record InvalidUtf8(byte[] bytes) {
    }

    /** A map key that is not a str. */
    record NonStringKey() {
    }

    /** An extension value, which no field accepts. */
    record Extension() {
    }

    /** One map entry: the key is a {@link String} or a {@link NonStringKey}. */
    record Entry(Object key, Object value) {
    }

    /** A map value, its entries in wire order. */
    record MapValue(List<Entry> entries) {
        /** The value of the first entry named {@code name}, or null when there is none. */
        Object get(String name) {
            for (Entry e : entries) {
                if (name.equals(e.key())) {
                    return e.value();
                }
            }
            return null;
        }

        boolean has(String name) {
            for (Entry e : entries) {
                if (name.equals(e.key())) {
                    return true;
                }
            }
            return false;
        }
    }

    private final MessageUnpacker in;
    private final long length;

    private ConductorBody(byte[] body) {
        this.in = MessagePack.newDefaultUnpacker(body);
        this.length = body.length;
    }

    /** The root map; 400 {@code invalid_msgpack} when the body holds no msgpack value or another one. */
    static MapValue read(byte[] body) {
        ConductorBody reader = new ConductorBody(body);
        try (MessageUnpacker in = reader.in) {
            if (!in.hasNext()) {
                throw invalidMsgpack();
            }
            Object root = reader.value(0);
            if (!(root instanceof MapValue map)) {
                throw ConductorError.invalid(ConductorError.INVALID_MSGPACK, "request body must be a msgpack map", null);
            }
            return map;
        } catch (ConductorError e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw invalidMsgpack();
        }
    }

    private static ConductorError invalidMsgpack() {
        return ConductorError.invalid(ConductorError.INVALID_MSGPACK, "Invalid msgpack object", null);
    }

    private Object value(int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw invalidMsgpack();
        }
        MessageFormat format = in.getNextFormat();
        switch (format.getValueType()) {
            case NIL:
                in.unpackNil();
                return Nil.INSTANCE;
            case BOOLEAN:
                return in.unpackBoolean();
            case INTEGER:
                if (format == MessageFormat.UINT64) {
                    BigInteger u = in.unpackBigInteger();
                    return u.bitLength() < Long.SIZE ? (Object) u.longValue() : u;
                }
                return in.unpackLong();
            case FLOAT:
                return in.unpackDouble();
            case STRING: {
                byte[] utf8 = payload(in.unpackRawStringHeader());
                try {
                    return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(utf8)).toString();
                } catch (CharacterCodingException e) {
                    return new InvalidUtf8(utf8);
                }
            }
            case BINARY:
                return payload(in.unpackBinaryHeader());
            case ARRAY: {
                int n = in.unpackArrayHeader();
                ensureRemaining(n);
                List<Object> out = new ArrayList<>(Math.min(n, 16));
                for (int i = 0; i < n; i++) {
                    out.add(value(depth + 1));
                }
                return out;
            }
            case MAP: {
                int n = in.unpackMapHeader();
                ensureRemaining(2L * n);
                List<Entry> entries = new ArrayList<>(Math.min(n, 16));
                for (int i = 0; i < n; i++) {
                    Object key = value(depth + 1);
                    entries.add(new Entry(key instanceof String ? key : new NonStringKey(), value(depth + 1)));
                }
                return new MapValue(entries);
            }
            default:
                in.skipValue();
                return new Extension();
        }
    }

    private byte[] payload(int declared) throws IOException {
        ensureRemaining(declared);
        return in.readPayload(declared);
    }

    private void ensureRemaining(long needed) {
        if (needed > length - in.getTotalReadBytes()) {
            throw invalidMsgpack();
        }
    }
}
