package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.NetworkConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Request bodies are held within the network budget: clients that each declare a large body and send a little of it
 * hold no more than the budget together; the next is a 503 with Retry-After before its body is read, and once they
 * are gone the budget holds nothing and requests are served again. A client that reads no answer is paused.
 */
class HttpBodyBudgetTest {
    private static final int DECLARED = 4 << 20;
    private IndexerNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void bodiesInProgressHoldNoMoreThanTheBudgetAndTheNextIsTold503() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0).withNetwork(new NetworkConfig(16 << 20, Duration.ofSeconds(15))));
        HttpJson http = new HttpJson(node.httpPort());
        List<Socket> holding = new ArrayList<>();
        String refused = null;
        try {
            // A quarter of the budget stays free of holdings over 1 MiB: three bodies of 4 MiB fit, the fourth not.
            for (int i = 0; i < 4 && refused == null; i++) {
                Socket s = new Socket("127.0.0.1", node.httpPort());
                holding.add(s);
                OutputStream out = s.getOutputStream();
                out.write(("POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                                + DECLARED + "\r\n\r\n{\"model\":")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                refused = answerWithin(s, i == 3 ? Duration.ofSeconds(30) : Duration.ofMillis(500));
            }
            assertTrue(refused != null && refused.startsWith("HTTP/1.1 503"), "the fourth: " + refused);
            assertTrue(refused.toLowerCase().contains("retry-after: 1"), refused);
            assertTrue(refused.contains("network budget"), refused);
            assertEquals(
                    3.0 * DECLARED,
                    MetricsPage.of(http).value("kvindexer_network_memory_held_bytes"),
                    "three bodies held");
        } finally {
            for (Socket s : holding) {
                s.close();
            }
        }
        Await.until(
                "the bodies given back",
                Await.PATIENCE,
                () -> MetricsPage.of(http).value("kvindexer_network_memory_held_bytes") == 0);
        assertEquals(1, MetricsPage.of(http).value("kvindexer_network_refused_total{port=\"http\"}"));
        // Read and answered again: no such model here, which only a read body could say.
        java.net.http.HttpResponse<String> after = http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3]}");
        assertEquals(404, after.statusCode(), after.body());
    }

    /**
     * A client that pipelines requests and reads no answer: the server stops reading from it once its answers queue,
     * so what it holds for that client stays small however much the client writes.
     */
    @Test
    void aClientThatPipelinesAndReadsNothingIsPausedNotBuffered() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        byte[] request = "GET /workers HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] chunk = new byte[request.length * 1000];
        for (int i = 0; i < 1000; i++) {
            System.arraycopy(request, 0, chunk, i * request.length, request.length);
        }
        long before = liveHeap();
        long[] written = {0};
        try (Socket s = new Socket("127.0.0.1", node.httpPort())) {
            Thread writer = new Thread(() -> {
                try {
                    OutputStream out = s.getOutputStream();
                    for (int i = 0; i < 10_000; i++) {
                        out.write(chunk);
                        written[0] += chunk.length;
                    }
                } catch (java.io.IOException closed) {
                    // the test closes the socket while the write is blocked
                }
            });
            writer.setDaemon(true);
            writer.start();
            // What the node would take of 330 MB of requests in ten seconds: it stops reading long before.
            writer.join(10_000);
            long grown = liveHeap() - before;
            assertTrue(writer.isAlive(), "the node read every request: " + written[0] + " bytes");
            assertTrue(grown < 16 << 20, "the node's heap grew by " + (grown >> 20) + " MiB");
        }
    }

    /** Heap in use after full collections, the least of three. */
    private static long liveHeap() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(
                    least,
                    java.lang.management.ManagementFactory.getMemoryMXBean()
                            .getHeapMemoryUsage()
                            .getUsed());
        }
        return least;
    }

    /** The head of an answer that came within {@code wait}, or null. */
    private static String answerWithin(Socket s, Duration wait) throws Exception {
        s.setSoTimeout((int) wait.toMillis());
        InputStream in = s.getInputStream();
        byte[] buf = new byte[4096];
        try {
            int n = in.read(buf);
            return n <= 0 ? null : new String(buf, 0, n, StandardCharsets.US_ASCII);
        } catch (java.net.SocketTimeoutException none) {
            return null;
        }
    }
}
