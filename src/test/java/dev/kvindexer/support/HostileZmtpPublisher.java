package dev.kvindexer.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A publisher that speaks just enough ZMTP 3.0 (NULL mechanism, PUB) for a SUB to accept it, then sends a message
 * frame whose header declares {@code declaredBytes} and only a few bytes of it, to every connection it accepts: the
 * frame bomb an attacker who can register an endpoint would send.
 */
public final class HostileZmtpPublisher implements AutoCloseable {
    private final ServerSocket server;
    private final long declaredBytes;
    private final AtomicInteger accepted = new AtomicInteger();
    private final List<Socket> open = new ArrayList<>();
    private final Thread acceptor;

    public HostileZmtpPublisher(long declaredBytes) throws IOException {
        this.declaredBytes = declaredBytes;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::acceptLoop, "hostile-zmtp");
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
                bomb(s);
            } catch (IOException e) {
                // closed, or the peer went away mid-handshake: wait for the next connection
            }
        }
    }

    private void bomb(Socket s) throws IOException {
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        out.write(greeting());
        out.flush();
        readFully(in, 64);
        out.write(readyCommand());
        out.flush();
        // A long message frame (flags 0x02): 8-byte big-endian size, then far fewer bytes than that.
        ByteBuffer frame = ByteBuffer.allocate(1 + 8 + 16);
        frame.put((byte) 0x02).putLong(declaredBytes).put(new byte[16]);
        out.write(frame.array());
        out.flush();
    }

    private static byte[] greeting() {
        ByteBuffer g = ByteBuffer.allocate(64);
        g.put((byte) 0xFF).put(new byte[8]).put((byte) 0x7F);
        g.put((byte) 3).put((byte) 0);
        byte[] mechanism = new byte[20];
        byte[] nul = "NULL".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(nul, 0, mechanism, 0, nul.length);
        g.put(mechanism).put((byte) 0);
        return g.array();
    }

    private static byte[] readyCommand() {
        byte[] name = "READY".getBytes(StandardCharsets.US_ASCII);
        byte[] key = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
        byte[] value = "PUB".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer body = ByteBuffer.allocate(1 + name.length + 1 + key.length + 4 + value.length);
        body.put((byte) name.length).put(name).put((byte) key.length).put(key).putInt(value.length).put(value);
        ByteBuffer cmd = ByteBuffer.allocate(2 + body.capacity());
        cmd.put((byte) 0x04).put((byte) body.capacity()).put(body.array());
        return cmd.array();
    }

    private static void readFully(InputStream in, int n) throws IOException {
        int got = 0;
        while (got < n) {
            int r = in.read(new byte[n - got]);
            if (r < 0) {
                throw new IOException("peer closed during the greeting");
            }
            got += r;
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
