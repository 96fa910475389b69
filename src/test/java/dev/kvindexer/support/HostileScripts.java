package dev.kvindexer.support;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * What a hostile or broken publisher sends a subscriber, byte by byte, as {@link ScriptedZmtpPeer} scripts: each
 * plays on one connection until the subscriber drops it (a write then fails) or the script runs out.
 */
public final class HostileScripts {
    private HostileScripts() {}

    /** The handshake, then zero-length frames with MORE set, forever: parts that carry no payload at all. */
    public static ScriptedZmtpPeer.Script endlessEmptyParts() {
        return endlessEmptyParts("PUB");
    }

    /** As {@link #endlessEmptyParts()}, greeting as a socket of {@code socketType} (a replay ROUTER, say). */
    public static ScriptedZmtpPeer.Script endlessEmptyParts(String socketType) {
        return repeatAfterHandshake(socketType, new byte[] {0x01, 0x00});
    }

    /** The handshake, then one-byte frames with MORE set, forever: three wire bytes a part. */
    public static ScriptedZmtpPeer.Script endlessOneByteParts() {
        return repeatAfterHandshake("PUB", new byte[] {0x01, 0x01, 'a'});
    }

    /** The handshake, then PING commands as fast as the socket takes them, never reading a PONG. */
    public static ScriptedZmtpPeer.Script pingFlood() {
        return pingFlood("PUB");
    }

    /** As {@link #pingFlood()}, greeting as a socket of {@code socketType}. */
    public static ScriptedZmtpPeer.Script pingFlood(String socketType) {
        byte[] ping = {0x04, 0x07, 0x04, 'P', 'I', 'N', 'G', 0x00, 0x00};
        return repeatAfterHandshake(socketType, ping);
    }

    /**
     * The handshake, then a message frame declaring {@code declared} bytes, {@code first} bytes of it, and one more
     * byte every {@code every}: a message that never completes but never falls silent.
     */
    public static ScriptedZmtpPeer.Script declareThenDrip(long declared, int first, Duration every) {
        return declareThenDrip("PUB", declared, first, every);
    }

    /** As {@link #declareThenDrip(long, int, Duration)}, greeting as a socket of {@code socketType}. */
    public static ScriptedZmtpPeer.Script declareThenDrip(String socketType, long declared, int first, Duration every) {
        return s -> {
            ScriptedZmtpPeer.handshakeAs(s, socketType);
            OutputStream out = s.getOutputStream();
            out.write(ByteBuffer.allocate(9).put((byte) 0x02).putLong(declared).array());
            out.write(new byte[first]);
            out.flush();
            for (long sent = first; sent < declared; sent++) {
                pause(every);
                out.write(0);
                out.flush();
            }
        };
    }

    /** The handshake, then half a frame (a header declaring 1000 bytes and 10 of them), then silence. */
    public static ScriptedZmtpPeer.Script halfFrameThenSilence() {
        return s -> {
            ScriptedZmtpPeer.handshakeAsPublisher(s);
            s.getOutputStream()
                    .write(ByteBuffer.allocate(12)
                            .put((byte) 0x02)
                            .putLong(1000)
                            .array());
            s.getOutputStream().write(new byte[10]);
            s.getOutputStream().flush();
        };
    }

    /** The greeting one byte at a time, {@code every} apart: a handshake that trickles and never completes in time. */
    public static ScriptedZmtpPeer.Script dripFedHandshake(Duration every) {
        return s -> {
            for (byte b : ScriptedZmtpPeer.greeting(3, "NULL")) {
                s.getOutputStream().write(b);
                s.getOutputStream().flush();
                pause(every);
            }
        };
    }

    /** The handshake, then one message of {@code parts} one-byte parts, sent again and again. */
    public static ScriptedZmtpPeer.Script manyParts(int parts) {
        byte[] message = new byte[parts * 3];
        for (int i = 0; i < parts; i++) {
            message[3 * i] = (byte) (i < parts - 1 ? 0x01 : 0x00);
            message[3 * i + 1] = 1;
            message[3 * i + 2] = 'p';
        }
        return repeatAfterHandshake("PUB", message);
    }

    /** Completes the handshake, takes the subscription and closes at once: a publisher that flaps. */
    public static ScriptedZmtpPeer.Script flapping() {
        return s -> {
            ScriptedZmtpPeer.handshakeAsPublisher(s);
            // The subscriber's READY and subscription: read, so the close is a FIN, not a reset.
            s.setSoTimeout(200);
            try {
                s.getInputStream().read(new byte[1024]);
            } catch (java.net.SocketTimeoutException e) {
                // nothing more came: close all the same
            }
            s.close();
        };
    }

    /** HTTP where a greeting should be. */
    public static ScriptedZmtpPeer.Script notZmtp() {
        return s -> s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    /** A greeting of ZMTP {@code major} with {@code mechanism}, then nothing. */
    public static ScriptedZmtpPeer.Script greeting(int major, String mechanism) {
        return s -> s.getOutputStream().write(ScriptedZmtpPeer.greeting(major, mechanism));
    }

    /** The handshake, then a frame header declaring {@code declared} bytes and 16 of them. */
    public static ScriptedZmtpPeer.Script frameBomb(long declared) {
        return s -> {
            ScriptedZmtpPeer.handshakeAsPublisher(s);
            s.getOutputStream()
                    .write(ByteBuffer.allocate(25)
                            .put((byte) 0x02)
                            .putLong(declared)
                            .array());
            s.getOutputStream().flush();
        };
    }

    private static ScriptedZmtpPeer.Script repeatAfterHandshake(String socketType, byte[] unit) {
        int copies = Math.max(1, 64 * 1024 / unit.length);
        byte[] chunk = new byte[copies * unit.length];
        for (int i = 0; i < copies; i++) {
            System.arraycopy(unit, 0, chunk, i * unit.length, unit.length);
        }
        return s -> {
            ScriptedZmtpPeer.handshakeAs(s, socketType);
            OutputStream out = s.getOutputStream();
            while (!s.isClosed()) {
                out.write(chunk);
            }
        };
    }

    private static void pause(Duration d) throws IOException {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
