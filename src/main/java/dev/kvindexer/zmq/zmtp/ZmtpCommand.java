package dev.kvindexer.zmq.zmtp;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The ZMTP commands a subscriber meets (RFC 23 READY and ERROR, RFC 37 PING and PONG): what a peer's command says,
 * and the frames of those we send.
 */
sealed interface ZmtpCommand {
    byte FLAG_COMMAND = 0x04;
    int MAX_PING_CONTEXT = 16;

    /** The peer's handshake metadata; a subscriber needs only its socket type. */
    record Ready(String socketType) implements ZmtpCommand {}

    /** A heartbeat the peer wants answered with a PONG carrying {@code context}. */
    record Ping(byte[] context) implements ZmtpCommand {}

    record Pong() implements ZmtpCommand {}

    /** The peer ends the connection and says why. */
    record Error(String reason) implements ZmtpCommand {}

    /** Any other command, ignored as the RFC asks. */
    record Other(String name) implements ZmtpCommand {}

    /** Parses a command frame's body. */
    static ZmtpCommand parse(byte[] body) throws ZmtpException {
        int nameLength = body.length == 0 ? -1 : body[0] & 0xFF;
        if (nameLength < 1 || 1 + nameLength > body.length) {
            throw ZmtpException.broken("a command without a name");
        }
        String name = new String(body, 1, nameLength, StandardCharsets.US_ASCII);
        int at = 1 + nameLength;
        return switch (name) {
            case "READY" -> new Ready(socketType(body, at));
            case "PING" -> {
                int from = Math.min(at + 2, body.length);
                yield new Ping(Arrays.copyOfRange(body, from, Math.min(body.length, from + MAX_PING_CONTEXT)));
            }
            case "PONG" -> new Pong();
            case "ERROR" -> {
                int reasonLength = at < body.length ? Math.min(body[at] & 0xFF, body.length - at - 1) : 0;
                yield new Error(new String(body, at + 1, Math.max(reasonLength, 0), StandardCharsets.US_ASCII));
            }
            default -> new Other(name);
        };
    }

    /** The Socket-Type property among READY's metadata (name length, name, 4-byte value length, value), or null. */
    private static String socketType(byte[] body, int at) throws ZmtpException {
        String type = null;
        while (at < body.length) {
            int nameLength = body[at] & 0xFF;
            int valueAt = at + 1 + nameLength + 4;
            if (valueAt > body.length) {
                throw ZmtpException.broken("malformed READY metadata");
            }
            String property = new String(body, at + 1, nameLength, StandardCharsets.US_ASCII);
            long valueLength = ((body[valueAt - 4] & 0xFFL) << 24)
                    | ((body[valueAt - 3] & 0xFF) << 16)
                    | ((body[valueAt - 2] & 0xFF) << 8)
                    | (body[valueAt - 1] & 0xFF);
            if (valueLength > body.length - valueAt) {
                throw ZmtpException.broken("malformed READY metadata");
            }
            if (property.equalsIgnoreCase("Socket-Type")) {
                type = new String(body, valueAt, (int) valueLength, StandardCharsets.US_ASCII);
            }
            at = valueAt + (int) valueLength;
        }
        return type;
    }

    /** Our READY as a SUB socket, a whole command frame. */
    static byte[] readyAsSubscriber() {
        return ready("SUB");
    }

    /** Our READY as a socket of {@code socketType}, a whole command frame. */
    static byte[] ready(String socketType) {
        byte[] property = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
        byte[] value = socketType.getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        name(body, "READY");
        body.write(property.length);
        body.writeBytes(property);
        body.writeBytes(new byte[] {0, 0, 0, (byte) value.length});
        body.writeBytes(value);
        return frame(body);
    }

    /** A PING asking the peer to drop us after {@code ttlDeciseconds} without traffic (RFC 37). */
    static byte[] ping(int ttlDeciseconds) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        name(body, "PING");
        int ttl = Math.min(ttlDeciseconds, 0xFFFF);
        body.write(ttl >>> 8);
        body.write(ttl);
        return frame(body);
    }

    static byte[] pong(byte[] context) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        name(body, "PONG");
        body.writeBytes(context);
        return frame(body);
    }

    private static void name(ByteArrayOutputStream body, String name) {
        body.write(name.length());
        body.writeBytes(name.getBytes(StandardCharsets.US_ASCII));
    }

    /** A short command frame: every command we send is under 256 bytes. */
    private static byte[] frame(ByteArrayOutputStream body) {
        byte[] b = body.toByteArray();
        byte[] f = new byte[2 + b.length];
        f[0] = FLAG_COMMAND;
        f[1] = (byte) b.length;
        System.arraycopy(b, 0, f, 2, b.length);
        return f;
    }
}
