package dev.kvindexer.zmq.zmtp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The 64-byte greeting that opens every ZMTP 3 connection (RFC 23): ours, and the checks on the peer's as its bytes
 * arrive, so a peer that is no ZMTP 3 publisher is dropped at the first byte that shows it.
 */
final class ZmtpGreeting {
    static final int SIZE = 64;
    private static final int SIGNATURE_END = 10;
    private static final int MAJOR = 10;
    private static final int MINOR = 11;
    private static final int MECHANISM = 12;
    private static final int MECHANISM_SIZE = 20;
    private static final byte[] NULL_MECHANISM = "NULL".getBytes(StandardCharsets.US_ASCII);

    /**
     * Version 3.1, so peers that heartbeat talk to us in commands they know we take; the subscription itself is
     * sent the 3.0 way, which JeroMQ requires and libzmq accepts from any peer.
     */
    static final byte[] OURS = ours();

    private ZmtpGreeting() {}

    private static byte[] ours() {
        byte[] g = new byte[SIZE];
        g[0] = (byte) 0xFF;
        g[SIGNATURE_END - 1] = 0x7F;
        g[MAJOR] = 3;
        g[MINOR] = 1;
        System.arraycopy(NULL_MECHANISM, 0, g, MECHANISM, NULL_MECHANISM.length);
        return g;
    }

    /**
     * Why the peer's greeting is unacceptable, judged on its first {@code length} bytes; null while nothing
     * received so far rules it out. Each check runs once, when its last byte arrives.
     */
    static String problem(byte[] peer, int before, int length) {
        if (before < 1 && length >= 1 && (peer[0] & 0xFF) != 0xFF) {
            return "not a ZMTP peer (its first byte is 0x" + Integer.toHexString(peer[0] & 0xFF) + ")";
        }
        if (before < SIGNATURE_END && length >= SIGNATURE_END && (peer[SIGNATURE_END - 1] & 1) == 0) {
            return "not a ZMTP 3 peer (a ZMTP 1.0 signature)";
        }
        if (before <= MAJOR && length > MAJOR && peer[MAJOR] < 3) {
            return "ZMTP version " + peer[MAJOR] + "; version 3 is needed";
        }
        if (before < SIZE && length == SIZE && !nullMechanism(peer)) {
            return "security mechanism "
                    + new String(peer, MECHANISM, MECHANISM_SIZE, StandardCharsets.US_ASCII).replace("\0", "")
                    + "; only NULL is spoken";
        }
        return null;
    }

    private static boolean nullMechanism(byte[] peer) {
        for (int i = 0; i < MECHANISM_SIZE; i++) {
            byte expected = i < NULL_MECHANISM.length ? NULL_MECHANISM[i] : 0;
            if (peer[MECHANISM + i] != expected) {
                return false;
            }
        }
        return true;
    }

    /** A peer's greeting as its bytes arrive, each check made as soon as its bytes are in. */
    static final class Incoming {
        private final byte[] bytes = new byte[SIZE];
        private int length;

        /**
         * Takes greeting bytes from {@code in}; true once the greeting is whole, the rest of {@code in} being frames.
         * Throws at the first byte that shows the peer is no ZMTP 3 peer with the NULL mechanism.
         */
        boolean take(ByteBuffer in) throws ZmtpException {
            if (length < SIZE) {
                int before = length;
                int n = Math.min(SIZE - before, in.remaining());
                in.get(bytes, before, n);
                length += n;
                String problem = problem(bytes, before, length);
                if (problem != null) {
                    throw ZmtpException.broken(problem);
                }
            }
            return length == SIZE;
        }

        /** How far it got, for a handshake that timed out. */
        String progress() {
            return length == SIZE ? "greeting received" : length + " bytes of the greeting received";
        }
    }
}
