package dev.kvindexer.support;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A publisher that speaks just enough ZMTP 3.0 (NULL mechanism, PUB) for a SUB to accept it, then sends a message
 * frame whose header declares {@code declaredBytes} and only a few bytes of it, to every connection it accepts: the
 * frame bomb an attacker who can register an endpoint would send.
 */
public final class HostileZmtpPublisher implements AutoCloseable {
    private final ScriptedZmtpPeer peer;

    public HostileZmtpPublisher(long declaredBytes) throws IOException {
        this.peer = new ScriptedZmtpPeer(s -> {
            ScriptedZmtpPeer.handshakeAsPublisher(s);
            // A long message frame (flags 0x02): 8-byte big-endian size, then far fewer bytes than that.
            ByteBuffer frame = ByteBuffer.allocate(1 + 8 + 16);
            frame.put((byte) 0x02).putLong(declaredBytes).put(new byte[16]);
            s.getOutputStream().write(frame.array());
            s.getOutputStream().flush();
        });
    }

    public String endpoint() {
        return peer.endpoint();
    }

    /** Connections accepted so far: each reconnect of the subscriber is one more. */
    public int accepted() {
        return peer.accepted();
    }

    @Override
    public void close() throws IOException {
        peer.close();
    }
}
