package dev.kvindexer.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * One plain TCP connection to a server on 127.0.0.1, for what an HTTP client will not send: malformed or partial
 * requests, and connections held open without finishing one.
 */
public final class RawHttp implements AutoCloseable {
    private final Socket socket;

    public RawHttp(int port) {
        try {
            socket = new Socket("127.0.0.1", port);
            socket.setTcpNoDelay(true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An answer as it came off the wire; the body's bytes are its ISO-8859-1 characters. */
    public record Answer(int status, String headers, String body) {
        public String header(String name) {
            for (String line : headers.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    /** Sends bytes as they are; false once the server has closed the connection (the write failed). */
    public boolean send(byte[] bytes) {
        try {
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    public boolean send(String latin1) {
        return send(latin1.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Whether the server closed the connection within {@code timeout}: a read sees the end, or a reset. */
    public boolean closedWithin(Duration timeout) {
        return readUntilClosed(timeout) != null;
    }

    /**
     * Keeps sending {@code trickle} (a byte or so of a request that never ends) every {@code every} until the
     * server closes the connection, and says whether it did within {@code timeout}.
     */
    public boolean closedWhileTrickling(byte[] trickle, Duration every, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            socket.setSoTimeout((int) every.toMillis());
            InputStream in = socket.getInputStream();
            byte[] buf = new byte[4096];
            while (System.nanoTime() < deadline) {
                if (!send(trickle)) {
                    return true;
                }
                try {
                    if (in.read(buf) < 0) {
                        return true;
                    }
                } catch (SocketTimeoutException stillOpen) {
                    // the server is still waiting for the rest; keep trickling
                }
            }
            return false;
        } catch (SocketException reset) {
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The one answer the server sends before it closes the connection; fails if it does not close in time. */
    public Answer answerThenClose(Duration timeout) {
        byte[] all = readUntilClosed(timeout);
        if (all == null) {
            throw new AssertionError("the server did not close the connection within " + timeout);
        }
        return parse(new String(all, StandardCharsets.ISO_8859_1));
    }

    /** The next answer on a connection that stays open: headers, then a body of its content-length or chunks. */
    public Answer answer(Duration timeout) {
        try {
            socket.setSoTimeout((int) timeout.toMillis());
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new AssertionError("closed before a whole answer: " + head);
                }
                head.write(b);
            }
            Answer headers = parse(head.toString(StandardCharsets.ISO_8859_1));
            String length = headers.header("content-length");
            byte[] body = "chunked".equalsIgnoreCase(headers.header("transfer-encoding"))
                    ? chunks(in)
                    : in.readNBytes(length == null ? 0 : Integer.parseInt(length));
            return new Answer(headers.status(), headers.headers(), new String(body, StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A chunked body: hex size lines, each chunk and its CRLF, up to the empty last chunk and its trailer. */
    private static byte[] chunks(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String size = line(in);
            int n = Integer.parseInt(size.split(";", 2)[0].trim(), 16);
            if (n == 0) {
                while (!line(in).isEmpty()) {
                    // trailer fields
                }
                return body.toByteArray();
            }
            body.write(in.readNBytes(n));
            line(in);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\n') {
            if (b < 0) {
                throw new AssertionError("closed inside a chunked body");
            }
            if (b != '\r') {
                out.write(b);
            }
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    private byte[] readUntilClosed(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        try {
            InputStream in = socket.getInputStream();
            while (true) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    return null;
                }
                socket.setSoTimeout((int) left);
                int n;
                try {
                    n = in.read(buf);
                } catch (SocketTimeoutException open) {
                    return null;
                }
                if (n < 0) {
                    return all.toByteArray();
                }
                all.write(buf, 0, n);
            }
        } catch (SocketException reset) {
            return all.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Answer parse(String raw) {
        int split = raw.indexOf("\r\n\r\n");
        if (split < 0 || raw.indexOf(' ') < 0) {
            throw new AssertionError("not an HTTP answer: " + raw);
        }
        String head = raw.substring(0, split);
        String statusLine = head.split("\r\n", 2)[0];
        int status = Integer.parseInt(statusLine.split(" ")[1].trim());
        return new Answer(status, head, raw.substring(split + 4));
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing a test connection
        }
    }
}
