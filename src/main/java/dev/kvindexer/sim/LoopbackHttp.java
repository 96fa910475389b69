package dev.kvindexer.sim;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One keep-alive HTTP/1.1 connection to a node on this host, sending prepared requests and reading each answer whole:
 * what the start-up warm-up and the simulated engines send. The JDK's client would load a few hundred classes, set up
 * TLS and start a selector thread in a node that needs none of them, and Netty's would put its client codec beside
 * the server's in what the compiler sees.
 */
public final class LoopbackHttp implements AutoCloseable {
    /** An answer's status and body. */
    public record Answer(int status, byte[] body) {}

    private static final int HEAD_LIMIT = 8192;
    /** The longest answer read: a node's answers are short, and a declared length is checked before allocating. */
    private static final int BODY_LIMIT = 64 << 20;

    private final Socket socket = new Socket();
    private final InputStream in;
    private final OutputStream out;
    private final byte[] buffer = new byte[HEAD_LIMIT];

    public LoopbackHttp(String host, int port) throws IOException {
        try {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(30_000);
            socket.connect(new InetSocketAddress(host, port), 5_000);
            in = socket.getInputStream();
            out = socket.getOutputStream();
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /** A POST of {@code body}, as its bytes on the wire. */
    public static byte[] post(String path, String contentType, byte[] body) {
        return request("POST", path, contentType, body);
    }

    /**
     * A request as its bytes on the wire: {@code headers} (each a whole line without its end, such as a client's
     * {@code "User-Agent: curl/8.5.0"}) after the host, then the content's type and length unless
     * {@code contentType} is null (a request without a body).
     */
    public static byte[] request(String method, String path, String contentType, byte[] body, String... headers) {
        StringBuilder head = new StringBuilder(128)
                .append(method)
                .append(' ')
                .append(path)
                .append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        for (String header : headers) {
            head.append(header).append("\r\n");
        }
        if (contentType != null) {
            head.append("Content-Type: ")
                    .append(contentType)
                    .append("\r\nContent-Length: ")
                    .append(body.length)
                    .append("\r\n");
        }
        byte[] headBytes = head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream request = new ByteArrayOutputStream(headBytes.length + body.length);
        request.writeBytes(headBytes);
        request.writeBytes(body);
        return request.toByteArray();
    }

    /** Sends a prepared request and reads its answer; throws unless the answer is a 200. */
    public void send(byte[] request) throws IOException {
        int status = exchange(request).status();
        if (status != 200) {
            throw new IOException("answered " + status);
        }
    }

    /** Sends a prepared request and returns its answer, whatever its status. */
    public Answer exchange(byte[] request) throws IOException {
        out.write(request);
        out.flush();
        int filled = 0;
        int headEnd;
        while ((headEnd = headEnd(filled)) < 0) {
            if (filled == HEAD_LIMIT) {
                throw new IOException("an answer's head over " + HEAD_LIMIT + " bytes");
            }
            int n = in.read(buffer, filled, HEAD_LIMIT - filled);
            if (n < 0) {
                throw new IOException("the connection closed before an answer");
            }
            filled += n;
        }
        String head = new String(buffer, 0, headEnd, StandardCharsets.US_ASCII);
        int status = status(head);
        long length = contentLength(head);
        int early = filled - headEnd - 4;
        if (length > BODY_LIMIT || early > length) {
            throw new IOException("an answer of " + early + " bytes or more against its content-length " + length);
        }
        byte[] body = new byte[(int) length];
        System.arraycopy(buffer, headEnd + 4, body, 0, early);
        for (int at = early; at < body.length; ) {
            int n = in.read(body, at, body.length - at);
            if (n < 0) {
                throw new IOException("the connection closed inside an answer");
            }
            at += n;
        }
        return new Answer(status, body);
    }

    private int headEnd(int filled) {
        for (int i = 3; i < filled; i++) {
            if (buffer[i] == '\n' && buffer[i - 1] == '\r' && buffer[i - 2] == '\n' && buffer[i - 3] == '\r') {
                return i - 3;
            }
        }
        return -1;
    }

    private static int status(String head) throws IOException {
        String[] line = head.lines().findFirst().orElse("").split(" ", 3);
        if (line.length < 2 || !line[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP/1 answer: " + Arrays.toString(line));
        }
        try {
            return Integer.parseInt(line[1]);
        } catch (NumberFormatException e) {
            throw new IOException("not an HTTP/1 answer: " + Arrays.toString(line), e);
        }
    }

    private static long contentLength(String head) throws IOException {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                return Long.parseLong(line.substring(colon + 1).trim());
            }
        }
        throw new IOException("an answer without a content-length");
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
