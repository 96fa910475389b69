package dev.kvindexer.cluster;

import java.io.ByteArrayOutputStream;

/**
 * The few DER encodings {@link BusKeys} needs to write one X.509 certificate by hand: the JDK can read and verify
 * certificates but has no public API to write one, and a library for this alone is not worth its weight.
 */
final class Der {
    static final int BOOLEAN = 0x01;
    static final int INTEGER = 0x02;
    static final int BIT_STRING = 0x03;
    static final int OCTET_STRING = 0x04;
    static final int OID = 0x06;
    static final int UTF8_STRING = 0x0c;
    static final int UTC_TIME = 0x17;
    static final int GENERALIZED_TIME = 0x18;

    private Der() {}

    static byte[] sequence(byte[]... parts) {
        return tlv(0x30, concat(parts));
    }

    static byte[] set(byte[]... parts) {
        return tlv(0x31, concat(parts));
    }

    /** A context-specific constructed tag {@code [n]}, as X.509 marks its version and extensions. */
    static byte[] explicit(int n, byte[] content) {
        return tlv(0xa0 | n, content);
    }

    /** A BIT STRING of whole bytes (no unused bits), as a signature is written. */
    static byte[] bits(byte[] bytes) {
        byte[] content = new byte[bytes.length + 1];
        System.arraycopy(bytes, 0, content, 1, bytes.length);
        return tlv(BIT_STRING, content);
    }

    static byte[] tlv(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 4);
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else if (n < 0x100) {
            out.write(0x81);
            out.write(n);
        } else if (n < 0x10000) {
            out.write(0x82);
            out.write(n >> 8);
            out.write(n);
        } else {
            throw new IllegalArgumentException("a DER value of " + n + " bytes is beyond what a certificate needs");
        }
        out.writeBytes(value);
        return out.toByteArray();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
