package dev.kvindexer.hash;

import java.util.Arrays;

/**
 * CPython's C pickler, protocol 5, for the only values vLLM's {@code sha256} block hash pickles: a str (the seed), and
 * {@code (parent: bytes, tokens: tuple[int], extras: tuple[str] | None)} (docs/protocol/hashing.md#vllm-v1-block-hash).
 * Every object is distinct, so
 * nothing is ever read back from the memo. Framing follows the pickler: a pending frame is written out once it has
 * reached 64 KiB when the next object starts, and a str or bytes payload of 64 KiB or more goes out unframed. No
 * library writes pickle, so this is the one encoder kept by hand; the vectors prove it.
 */
final class PickleProtocol5 {
    private static final int FRAME_SIZE_TARGET = 64 * 1024;

    /** A growable byte buffer without the locking of ByteArrayOutputStream: each block writes dozens of bytes. */
    private static final class Bytes {
        byte[] data = new byte[256];
        int size;

        void write(int b) {
            ensure(1);
            data[size++] = (byte) b;
        }

        void write(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, data, size, len);
            size += len;
        }

        private void ensure(int more) {
            if (size + more > data.length) {
                data = Arrays.copyOf(data, Math.max(data.length * 2, size + more));
            }
        }
    }

    private final Bytes out = new Bytes();
    private final Bytes frame = new Bytes();

    /** The pickle of a Python str. */
    byte[] string(byte[] utf8) {
        begin();
        text(utf8);
        return end();
    }

    /** The pickle of {@code (parent, tuple(tokens[from:from+n]), extras or None)}. */
    byte[] block(byte[] parent, int[] tokens, int from, int n, byte[][] extras) {
        begin();
        boundary();
        payload(0x43, parent);
        frame.write(0x94);
        boundary();
        if (n > 3) {
            frame.write(0x28);
        }
        for (int i = from; i < from + n; i++) {
            boundary();
            integer(tokens[i]);
        }
        frame.write(n > 3 ? 0x74 : 0x84 + n);
        frame.write(0x94);
        boundary();
        if (extras.length == 0) {
            frame.write(0x4e);
        } else {
            for (byte[] e : extras) {
                boundary();
                text(e);
            }
            frame.write(0x84 + extras.length);
            frame.write(0x94);
        }
        frame.write(0x87);
        frame.write(0x94);
        return end();
    }

    private void begin() {
        out.size = 0;
        frame.size = 0;
        out.write(0x80);
        out.write(5);
    }

    private byte[] end() {
        frame.write(0x2e);
        commit();
        return Arrays.copyOf(out.data, out.size);
    }

    /** Where the pickler starts saving an object: a pending frame that has reached the target goes out. */
    private void boundary() {
        if (frame.size >= FRAME_SIZE_TARGET) {
            commit();
        }
    }

    private void commit() {
        if (frame.size == 0) {
            return;
        }
        out.write(0x95);
        littleEndian(out, frame.size, 8);
        out.write(frame.data, 0, frame.size);
        frame.size = 0;
    }

    /** BININT1, BININT2 or BININT, the shortest that holds the value. */
    private void integer(int v) {
        if (v >= 0 && v <= 0xff) {
            frame.write(0x4b);
            frame.write(v);
        } else if (v >= 0 && v <= 0xffff) {
            frame.write(0x4d);
            littleEndian(frame, v, 2);
        } else {
            frame.write(0x4a);
            littleEndian(frame, v, 4);
        }
    }

    /** SHORT_BINUNICODE, BINUNICODE or BINUNICODE8, then MEMOIZE. */
    private void text(byte[] utf8) {
        if (utf8.length <= 0xff) {
            frame.write(0x8c);
            frame.write(utf8.length);
            frame.write(utf8, 0, utf8.length);
        } else {
            payload(0x58, utf8);
        }
        frame.write(0x94);
    }

    /** A str or bytes payload with its opcode and length; one of 64 KiB or more is written outside any frame. */
    private void payload(int shortOpcode, byte[] bytes) {
        Bytes to = frame;
        if (bytes.length >= FRAME_SIZE_TARGET) {
            commit();
            to = out;
        }
        if (bytes.length <= 0xff && shortOpcode == 0x43) {
            to.write(0x43);
            to.write(bytes.length);
        } else if (shortOpcode == 0x43) {
            to.write(0x42);
            littleEndian(to, bytes.length, 4);
        } else if (bytes.length <= 0xffff_ffffL) {
            to.write(0x58);
            littleEndian(to, bytes.length, 4);
        } else {
            to.write(0x8d);
            littleEndian(to, bytes.length, 8);
        }
        to.write(bytes, 0, bytes.length);
    }

    private static void littleEndian(Bytes to, long v, int bytes) {
        for (int i = 0; i < bytes; i++) {
            to.write((int) (v >>> (8 * i)));
        }
    }
}
