package dev.kvindexer.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * A raw TCP client to a cluster port, sending what no node would: a frame or packet header declaring far more than it
 * will ever send, then zeros, or nothing at all. It tells whether, and when, the other side closed the connection.
 */
final class HostileConnection implements AutoCloseable {
    /** What the reports call "declaring two gigabytes": the largest int a length field takes, rounded down. */
    static final int HUGE = 0x7ffffff0;

    private static final byte[] ZEROS = new byte[64 * 1024];

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    private HostileConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = socket.getInputStream();
    }

    static HostileConnection open(int port) {
        try {
            Socket s = new Socket();
            s.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
            return new HostileConnection(s);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot connect to port " + port, e);
        }
    }

    /** A connection, or null when it could not be made. */
    static HostileConnection tryOpen(int port) {
        try {
            return open(port);
        } catch (UncheckedIOException e) {
            return null;
        }
    }

    /** Bytes of {@link #busFrame}'s envelope: version, codec, send, three empty strings, no headers, body length. */
    static final int ENVELOPE = 23;

    /**
     * An event-bus frame's first bytes: the length Vert.x reads first and, when it declares room for it, the envelope
     * of a Buffer message whose body fills the rest, so that what the caller sends next is that body.
     */
    static byte[] busFrame(int declared) {
        if (declared < ENVELOPE) {
            return ByteBuffer.allocate(4).putInt(declared).array();
        }
        return ByteBuffer.allocate(4 + ENVELOPE)
                .putInt(declared)
                .put((byte) 1) // wire protocol version
                .put((byte) 3) // Vert.x's Buffer codec
                .put((byte) 0) // send, not publish
                .putInt(0) // address
                .putInt(0) // reply address
                .putInt(0) // sender
                .putInt(4) // headers: only their own length
                .putInt(declared - ENVELOPE) // the body's length
                .array();
    }

    /** The Hazelcast member protocol's first bytes and a packet header (version 4, no flags, no partition). */
    static byte[] memberPacket(int declared) {
        return ByteBuffer.allocate(3 + CappedPacketDecoder.HEADER_BYTES)
                .put((byte) 'H')
                .put((byte) 'Z')
                .put((byte) 'C')
                .put((byte) 4)
                .putChar((char) 0)
                .putInt(-1)
                .putInt(declared)
                .array();
    }

    /** False when the other side has already closed the connection. */
    boolean send(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
            return true;
        } catch (IOException closed) {
            return false;
        }
    }

    /** Zeros until the other side closes the connection or {@code max} bytes are sent; returns the bytes sent. */
    long streamZeros(long max) {
        long sent = 0;
        while (sent < max && send(ZEROS)) {
            sent += ZEROS.length;
        }
        return sent;
    }

    /** Whether the other side closes the connection within {@code timeout} (it sends nothing before). */
    boolean closedWithin(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                socket.setSoTimeout((int) Math.max(1, Math.min(500, (deadline - System.nanoTime()) / 1_000_000)));
                try {
                    if (in.read() < 0) {
                        return true;
                    }
                } catch (SocketTimeoutException stillOpen) {
                    // read again until the deadline
                }
            }
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
