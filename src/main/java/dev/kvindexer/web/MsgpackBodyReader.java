package dev.kvindexer.web;

import io.vertx.core.json.JsonArray;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Reads a msgpack request body into the values {@link JsonBodyReader} gives for JSON, allocating only what the body
 * holds: every length a header declares is checked against the bytes left before anything is read or allocated, and
 * containers nest no deeper than in JSON bodies. A forged header or a deep body is then a 400 like any other
 * malformed body.
 */
public final class MsgpackBodyReader {
    private static final String FAILED = "Failed to parse the request body as msgpack: ";
    private static final String TOKENS = "token_ids";
    /**
     * Lists and maps start no larger than this whatever count their header declares: each nested header may declare
     * nearly the whole body, and sizing by it would allocate the body's length once per level.
     */
    private static final int INITIAL_CAPACITY = 16;

    private final MessageUnpacker in;
    private final long length;

    private MsgpackBodyReader(byte[] body) {
        this.in = MessagePack.newDefaultUnpacker(body);
        this.length = body.length;
    }

    /** The body as the JSON value it stands for; 400 when it is not one whole msgpack value. */
    public static Object read(byte[] body) {
        MsgpackBodyReader reader = new MsgpackBodyReader(body);
        try (MessageUnpacker in = reader.in) {
            Object value = reader.value();
            if (in.hasNext()) {
                throw malformed("trailing bytes after the value");
            }
            return value;
        } catch (HttpError e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw malformed(e.getMessage());
        }
    }

    private static HttpError malformed(String detail) {
        return new HttpError(400, FAILED + detail);
    }

    /** A container with the size its header declared; {@code where} names it in errors. */
    private static final class Declared extends BodyContainer {
        final String where;
        final int size;

        Declared(boolean map, String where, int size) {
            super(map, Math.min(size, INITIAL_CAPACITY));
            this.where = where;
            this.size = size;
        }
    }

    /** The next whole value. */
    private Object value() throws IOException {
        Deque<Declared> open = new ArrayDeque<>();
        String where = "body";
        int index = -1;
        while (true) {
            Object value;
            MessageFormat format = in.getNextFormat();
            ValueType type = format.getValueType();
            if (type == ValueType.ARRAY || type == ValueType.MAP) {
                Declared c = open(type == ValueType.MAP, name(where, index), open.size() + 1);
                if (c.size > 0) {
                    open.push(c);
                    where = next(c);
                    index = c.isArray() ? 0 : -1;
                    continue;
                }
                value = c.value();
            } else {
                value = scalar(format, where, index);
            }
            // Hand the value to its container, and each container that is now full to its own.
            Declared parent;
            while ((parent = open.peek()) != null) {
                parent.add(value);
                if (parent.filled < parent.size) {
                    break;
                }
                value = open.pop().value();
            }
            if (parent == null) {
                return value;
            }
            where = next(parent);
            index = parent.isArray() ? parent.filled : -1;
        }
    }

    private Declared open(boolean map, String where, int depth) throws IOException {
        int n;
        if (map) {
            n = in.unpackMapHeader();
            // Every entry takes at least two bytes, its key and its value.
            ensureRemaining(2L * n, "a map of " + n + " entries");
        } else {
            n = in.unpackArrayHeader();
            // Every element takes at least one byte.
            ensureRemaining(n, "an array of " + n + " elements");
        }
        if (depth > JsonBodyReader.MAX_NESTING_DEPTH) {
            throw malformed("arrays and maps nest deeper than " + JsonBodyReader.MAX_NESTING_DEPTH + " levels");
        }
        return new Declared(map, where, n);
    }

    /** Where the next value of {@code c} goes: an array's name, or a map's next key (read here). */
    private String next(Declared c) throws IOException {
        if (c.isArray()) {
            return c.where;
        }
        if (in.getNextFormat().getValueType() != ValueType.STRING) {
            throw malformed("a key of `" + c.where + "` is not a string");
        }
        c.key = string();
        return c.key;
    }

    /** A value that is no container; its name (see {@link #name}) is spelled out only for a bin or an error. */
    private Object scalar(MessageFormat format, String where, int index) throws IOException {
        return switch (format.getValueType()) {
            case NIL -> {
                in.unpackNil();
                yield null;
            }
            case BOOLEAN -> in.unpackBoolean();
            case INTEGER -> {
                if (format == MessageFormat.UINT64) {
                    BigInteger u = in.unpackBigInteger();
                    yield u.bitLength() < Long.SIZE ? (Object) u.longValue() : u;
                }
                yield in.unpackLong();
            }
            case FLOAT -> in.unpackDouble();
            case STRING -> string();
            case BINARY -> u32LittleEndian(payload(in.unpackBinaryHeader(), "a bin"), name(where, index));
            default -> throw malformed("`" + name(where, index) + "` is an extension value");
        };
    }

    /** The member {@code where}, or with an {@code index} of 0 or more that element of the array {@code where}. */
    private static String name(String where, int index) {
        return index < 0 ? where : where + "[" + index + "]";
    }

    private String string() throws IOException {
        byte[] utf8 = payload(in.unpackRawStringHeader(), "a string");
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(utf8))
                    .toString();
        } catch (CharacterCodingException e) {
            throw malformed("a string is not valid UTF-8");
        }
    }

    private byte[] payload(int declared, String what) throws IOException {
        ensureRemaining(declared, what + " of " + declared + " bytes");
        return in.readPayload(declared);
    }

    private void ensureRemaining(long needed, String what) {
        long remaining = length - in.getTotalReadBytes();
        if (needed > remaining) {
            throw malformed(what + " declared with only " + remaining + " bytes left");
        }
    }

    /** {@code token_ids} come out packed (an int[], as JsonBodyReader gives them); any other bin as a JsonArray. */
    private static Object u32LittleEndian(byte[] bytes, String where) {
        if (bytes.length % 4 != 0) {
            throw HttpError.shape(
                    "`" + where + "`: a bin of u32 values needs a multiple of 4 bytes, got " + bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (where.equals(TOKENS)) {
            int[] tokens = new int[bytes.length / 4];
            b.asIntBuffer().get(tokens);
            return new JsonBodyReader.PackedTokens(tokens);
        }
        List<Object> out = new ArrayList<>(bytes.length / 4);
        while (b.hasRemaining()) {
            out.add(Integer.toUnsignedLong(b.getInt()));
        }
        return new JsonArray(out);
    }
}
