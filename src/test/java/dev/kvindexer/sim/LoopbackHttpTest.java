package dev.kvindexer.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The loopback client against a real HTTP server: answers whole, any status, one connection for many requests. */
class LoopbackHttpTest {
    private Vertx vertx;
    private int port;

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        port = vertx.createHttpServer()
                .requestHandler(req -> req.body().onSuccess(body -> {
                    switch (req.path()) {
                        case "/echo" -> req.response().end(body);
                        case "/chunked" -> req.response().setChunked(true).end("no length");
                        case "/headers" ->
                            req.response()
                                    .end(req.method() + " " + body.length() + " "
                                            + req.headers().get("User-Agent") + " "
                                            + req.headers().get("accept") + " "
                                            + req.headers().get("Content-Length"));
                        default -> req.response().setStatusCode(404).end("{\"error\":\"no such route\"}");
                    }
                }))
                .listen(0, "127.0.0.1")
                .toCompletionStage()
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS)
                .actualPort();
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void answersAreReadWholeOverOneConnection() throws IOException {
        byte[] large = new byte[200_000]; // past the head's buffer, so the body arrives in many reads
        for (int i = 0; i < large.length; i++) {
            large[i] = (byte) (i * 31);
        }
        try (LoopbackHttp http = new LoopbackHttp("127.0.0.1", port)) {
            for (int round = 0; round < 3; round++) {
                LoopbackHttp.Answer answer = http.exchange(LoopbackHttp.post("/echo", "application/msgpack", large));
                assertEquals(200, answer.status());
                assertArrayEquals(large, answer.body(), "round " + round);
                http.send(LoopbackHttp.post("/echo", "application/json", "{}".getBytes(StandardCharsets.UTF_8)));
            }
            LoopbackHttp.Answer missing = http.exchange(LoopbackHttp.post("/nowhere", "application/json", new byte[0]));
            assertEquals(404, missing.status());
            assertEquals("{\"error\":\"no such route\"}", new String(missing.body(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void aRequestCarriesItsMethodAndAClientsHeadersAndNoBodyWithoutAType() throws IOException {
        try (LoopbackHttp http = new LoopbackHttp("127.0.0.1", port)) {
            LoopbackHttp.Answer probe = http.exchange(LoopbackHttp.request(
                    "GET", "/headers", null, new byte[0], "User-Agent: curl/8.5.0", "accept: */*"));
            assertEquals("GET 0 curl/8.5.0 */* null", new String(probe.body(), StandardCharsets.UTF_8));
            LoopbackHttp.Answer post = http.exchange(LoopbackHttp.request(
                    "POST", "/headers", "application/json", "{}".getBytes(StandardCharsets.UTF_8), "Accept: */*"));
            assertEquals("POST 2 null */* 2", new String(post.body(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void sendRefusesAnythingButA200AndExchangeAnAnswerWithoutLength() throws IOException {
        try (LoopbackHttp http = new LoopbackHttp("127.0.0.1", port)) {
            IOException refused = assertThrows(
                    IOException.class, () -> http.send(LoopbackHttp.post("/nowhere", "application/json", new byte[0])));
            assertTrue(refused.getMessage().contains("404"), refused.getMessage());
        }
        try (LoopbackHttp http = new LoopbackHttp("127.0.0.1", port)) {
            IOException noLength = assertThrows(
                    IOException.class,
                    () -> http.exchange(LoopbackHttp.post(
                            "/chunked", "application/json", Buffer.buffer().getBytes())));
            assertTrue(noLength.getMessage().contains("content-length"), noLength.getMessage());
        }
    }

    @Test
    void aDeclaredLengthPastTheLimitIsRefusedBeforeAllocating() throws Exception {
        try (java.net.ServerSocket server =
                new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Thread answerer = new Thread(() -> {
                try (java.net.Socket s = server.accept()) {
                    s.getInputStream().read(new byte[1024]);
                    s.getOutputStream()
                            .write("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nabc"
                                    .getBytes(StandardCharsets.US_ASCII));
                    s.getInputStream().read(); // until the client hangs up
                } catch (IOException ignored) {
                    // the client went away
                }
            });
            answerer.start();
            try (LoopbackHttp http = new LoopbackHttp("127.0.0.1", server.getLocalPort())) {
                IOException refused = assertThrows(
                        IOException.class,
                        () -> http.exchange(LoopbackHttp.post("/x", "application/json", new byte[0])));
                assertTrue(refused.getMessage().contains("99999999999"), refused.getMessage());
            }
            answerer.join(10_000);
        }
    }
}
