package dev.kvindexer.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * A peer whose dump is too large or too slow is given up with a clear reason and the next peer serves recovery;
 * a kvindexer peer answers with its binary snapshot and a node recovers from it exactly.
 */
class RecoveryLimitsTest {
    private static final String REGISTER =
            "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\"," + "\"model_name\":\"m\",\"block_size\":4}";

    /** A peer on loopback that answers one request with {@code head} and then whatever {@code body} writes. */
    private static final class FakePeer implements AutoCloseable {
        interface Body {
            void write(OutputStream out) throws IOException, InterruptedException;
        }

        final ServerSocket server;
        final CountDownLatch release = new CountDownLatch(1);
        final Thread thread;

        FakePeer(String contentType, Body body) throws IOException {
            server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            thread = new Thread(
                    () -> {
                        try (Socket s = server.accept()) {
                            InputStream in = s.getInputStream();
                            byte[] buf = new byte[4096];
                            in.read(buf);
                            OutputStream out = s.getOutputStream();
                            out.write(("HTTP/1.1 200 OK\r\ncontent-type: " + contentType + "\r\n"
                                            + "transfer-encoding: chunked\r\n\r\n")
                                    .getBytes(StandardCharsets.US_ASCII));
                            body.write(new ChunkedOut(out));
                            release.await();
                        } catch (IOException | InterruptedException ignored) {
                            // the node gave up on us, which is the point
                        }
                    },
                    "fake-peer");
            thread.setDaemon(true);
            thread.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            release.countDown();
            server.close();
        }
    }

    /** Writes each write as one HTTP chunk. */
    private static final class ChunkedOut extends OutputStream {
        private final OutputStream out;

        ChunkedOut(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write((Integer.toHexString(len) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(b, off, len);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }
    }

    private static IndexerNode replicaOf(List<String> peers, RecoveryConfig limits) throws Exception {
        return IndexerNode.start(ServeConfig.local(0).withPeers(peers).withRecovery(limits));
    }

    @Test
    void aDumpLargerThanTheLimitIsGivenUpForTheNextPeer() throws Exception {
        IndexerNode a = IndexerNode.start(ServeConfig.local(0));
        byte[] padding = new byte[64 * 1024];
        java.util.Arrays.fill(padding, (byte) ' ');
        try (FakePeer huge = new FakePeer("application/json", out -> {
            out.write("{\"m:default\":{\"block_size\":4,\"events\":[".getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < 64; i++) {
                out.write(padding);
            }
        })) {
            assertEquals(
                    201, new HttpJson(a.httpPort()).post("/register", REGISTER).statusCode());
            IndexerNode b = replicaOf(
                    List.of(huge.url(), "http://127.0.0.1:" + a.httpPort()),
                    new RecoveryConfig(1024 * 1024, Duration.ofMinutes(1)));
            try {
                assertEquals("http://127.0.0.1:" + a.httpPort(), b.recovery().peer());
                assertTrue(b.recovery().exact(), "the kvindexer peer's snapshot");
            } finally {
                b.close();
            }
        } finally {
            a.close();
        }
    }

    @Test
    void aPeerThatStallsIsGivenUpAtTheTimeout() throws Exception {
        IndexerNode a = IndexerNode.start(ServeConfig.local(0));
        try (FakePeer stalled = new FakePeer(
                "application/x-kvindexer-snapshot", out -> out.write(new byte[] {'K', 'V', 'S', 'N', 'A', 'P', 1}))) {
            IndexerNode b = replicaOf(
                    List.of(stalled.url(), "http://127.0.0.1:" + a.httpPort()),
                    new RecoveryConfig(1024 * 1024, Duration.ofSeconds(2)));
            try {
                assertEquals("http://127.0.0.1:" + a.httpPort(), b.recovery().peer());
            } finally {
                b.close();
            }
        } finally {
            a.close();
        }
    }
}
