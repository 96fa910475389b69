package dev.kvindexer.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.support.Await;
import dev.kvindexer.support.ChaosReport;
import dev.kvindexer.support.ChildJvm;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.IngestHarness;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 3,000 connections that never finish a request, a third silent, a third trickling a head a byte at a time, a third
 * stopping halfway through a body, against a node in its own JVM: all are closed by the server within its limits, the
 * node keeps answering, and its open file descriptors come back down.
 */
@Tag("chaos")
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class SlowClientsChaosTest {
    private static final int CONNECTIONS = 3_000;
    private static final int IDLE_SECONDS = 5;
    private static final int REQUEST_SECONDS = 3;

    @Test
    void threeThousandStalledConnectionsAreAllClosedAndTheNodeKeepsAnswering() throws Exception {
        ChaosReport report = new ChaosReport("slow-clients");
        int port = IngestHarness.freePorts(1)[0];
        List<Socket> sockets = new ArrayList<>();
        try (ChildJvm node = ChildJvm.start(
                List.of("-Xmx256m"),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--http-idle-timeout",
                Integer.toString(IDLE_SECONDS),
                "--http-request-timeout",
                Integer.toString(REQUEST_SECONDS))) {
            HttpJson http = new HttpJson(port);
            Await.until("the node answers", Duration.ofSeconds(60), () -> {
                try {
                    return http.get("/health").statusCode() == 200;
                } catch (AssertionError notYet) {
                    return false;
                }
            });
            long pid = node.process().pid();
            int fdsBefore = openFiles(pid);
            long start = System.nanoTime();
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                s.setSoTimeout(1);
                OutputStream out = s.getOutputStream();
                if (i % 3 == 1) {
                    out.write("P".getBytes(StandardCharsets.US_ASCII));
                } else if (i % 3 == 2) {
                    out.write(("POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                    + "Content-Length: 1000\r\n\r\n{\"model_name\":")
                            .getBytes(StandardCharsets.US_ASCII));
                }
                sockets.add(s);
            }
            int fdsHeld = openFiles(pid);
            byte[] head = "OST /query HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII);
            int trickled = 0;
            int healthChecks = 0;
            List<Socket> open = new ArrayList<>(sockets);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(4L * IDLE_SECONDS + 30);
            while (!open.isEmpty() && System.nanoTime() < deadline) {
                for (int i = open.size() - 1; i >= 0; i--) {
                    Socket s = open.get(i);
                    if (closedByServer(s)) {
                        open.remove(i);
                    } else if (sockets.indexOf(s) % 3 == 1) {
                        trickle(s, head, trickled);
                    }
                }
                trickled++;
                assertEquals(200, http.get("/health").statusCode(), "the node answers while the stalled ones wait");
                healthChecks++;
                Thread.sleep(1_000);
            }
            long closedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(open.isEmpty(), open.size() + " connections still open");
            Await.until(
                    "the node's descriptors come back down",
                    Duration.ofSeconds(30),
                    () -> openFiles(pid) < fdsBefore + 50);
            report.line(
                    "| run | %,d connections to a node with --http-idle-timeout %d --http-request-timeout %d: "
                            + "a third silent, a third trickling a head, a third stopping mid-body |",
                    CONNECTIONS, IDLE_SECONDS, REQUEST_SECONDS);
            report.line("| all closed by the server after | %,d ms (from the first connect) |", closedAfter);
            report.line(
                    "| node file descriptors before / holding them / after | %d / %d / %d |",
                    fdsBefore, fdsHeld, openFiles(pid));
            report.line("| /health while they were held | %d of %d answered 200 |", healthChecks, healthChecks);
        } finally {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    /** One more byte of a head that never ends (cycling through a request line and a header). */
    private static void trickle(Socket s, byte[] head, int round) {
        try {
            s.getOutputStream().write(head[round % head.length]);
        } catch (IOException e) {
            // closed by the server: seen on the next look
        }
    }

    /** True once the server closed the connection (end of stream, a reset, or a 408 answer followed by the close). */
    private static boolean closedByServer(Socket s) {
        try {
            InputStream in = s.getInputStream();
            byte[] buf = new byte[512];
            while (true) {
                int n = in.read(buf);
                if (n < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private static int openFiles(long pid) {
        String[] fds = new File("/proc/" + pid + "/fd").list();
        return fds == null ? -1 : fds.length;
    }
}
