package dev.kvindexer.support;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP server on loopback that plays the same script to every connection it accepts, one after another, and leaves
 * each open until closed: the publishers no real engine is (wrong greetings, garbage, one that falls silent) spelled
 * out byte by byte.
 */
public final class ScriptedZmtpPeer implements AutoCloseable {
    /** What the peer does with one accepted connection; it may return and leave the socket open. */
    @FunctionalInterface
    public interface Script {
        void play(Socket s) throws IOException;
    }

    private final ServerSocket server;
    private final Script script;
    private final boolean threadPerConnection;
    private final AtomicInteger accepted = new AtomicInteger();
    private final List<Socket> open = new ArrayList<>();

    public ScriptedZmtpPeer(Script script) throws IOException {
        this(script, false);
    }

    /**
     * With {@code threadPerConnection}, every connection plays the script on a thread of its own, so scripts that go
     * on for long (floods, drips) run side by side and the next connection is accepted meanwhile.
     */
    public ScriptedZmtpPeer(Script script, boolean threadPerConnection) throws IOException {
        this.script = script;
        this.threadPerConnection = threadPerConnection;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "scripted-zmtp");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public String endpoint() {
        return "tcp://127.0.0.1:" + server.getLocalPort();
    }

    /** Connections accepted so far: each reconnect of the subscriber is one more. */
    public int accepted() {
        return accepted.get();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                synchronized (open) {
                    open.add(s);
                }
                accepted.incrementAndGet();
                if (threadPerConnection) {
                    Thread t = new Thread(() -> playQuietly(s), "scripted-zmtp-connection");
                    t.setDaemon(true);
                    t.start();
                } else {
                    script.play(s);
                }
            } catch (IOException e) {
                // closed, or the subscriber went away mid-script: wait for the next connection
            }
        }
    }

    private void playQuietly(Socket s) {
        try {
            script.play(s);
        } catch (IOException e) {
            // the subscriber went away mid-script: what a hostile script is for
        }
    }

    /** A ZMTP 3.0 greeting with the given major version and security mechanism. */
    public static byte[] greeting(int major, String mechanism) {
        ByteBuffer g = ByteBuffer.allocate(64);
        g.put((byte) 0xFF).put(new byte[8]).put((byte) 0x7F);
        g.put((byte) major).put((byte) 0);
        byte[] name = new byte[20];
        byte[] m = mechanism.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(m, 0, name, 0, m.length);
        g.put(name).put((byte) 0);
        return g.array();
    }

    /** The READY command of a socket of {@code socketType}. */
    public static byte[] ready(String socketType) {
        byte[] name = "READY".getBytes(StandardCharsets.US_ASCII);
        byte[] key = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
        byte[] value = socketType.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer body = ByteBuffer.allocate(1 + name.length + 1 + key.length + 4 + value.length);
        body.put((byte) name.length)
                .put(name)
                .put((byte) key.length)
                .put(key)
                .putInt(value.length)
                .put(value);
        ByteBuffer cmd = ByteBuffer.allocate(2 + body.capacity());
        cmd.put((byte) 0x04).put((byte) body.capacity()).put(body.array());
        return cmd.array();
    }

    /** Greets as a ZMTP 3.0 PUB and reads the subscriber's greeting: from here on, frames. */
    public static void handshakeAsPublisher(Socket s) throws IOException {
        handshakeAs(s, "PUB");
    }

    /** Greets as a ZMTP 3.0 socket of {@code socketType} and reads the peer's greeting: from here on, frames. */
    public static void handshakeAs(Socket s, String socketType) throws IOException {
        s.getOutputStream().write(greeting(3, "NULL"));
        readFully(s.getInputStream(), 64);
        s.getOutputStream().write(ready(socketType));
        s.getOutputStream().flush();
    }

    public static void readFully(InputStream in, int n) throws IOException {
        if (in.readNBytes(n).length < n) {
            throw new IOException("peer closed during the greeting");
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        synchronized (open) {
            for (Socket s : open) {
                s.close();
            }
        }
    }
}
