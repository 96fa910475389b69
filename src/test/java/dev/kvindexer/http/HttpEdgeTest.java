package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.cli.SlotTrackerCommand;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.config.SlotTrackerConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.RawHttp;
import dev.kvindexer.tracker.SlotTrackerVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The edges of both HTTP servers (indexer and slot tracker): connections that never finish a request are closed
 * (a silent one, a head trickled byte by byte, a body that stops half way, hundreds at once), and what the HTTP codec
 * and Vert.x Web refuse by themselves has the same JSON error body as every other error. Raw sockets send what an
 * HTTP client would not; the timeouts are a second, and every wait has a generous deadline.
 */
class HttpEdgeTest {
    private static final HttpConfig LIMITS = new HttpConfig(Duration.ofSeconds(1), Duration.ofSeconds(1));
    private static final Duration CLOSED_WITHIN = Duration.ofSeconds(10);

    /** A started server, with a POST route and a valid body for it. */
    private record Running(int port, AutoCloseable stop, String postRoute, String postBody, String getRoute) {}

    enum Server {
        INDEXER {
            @Override
            Running start() throws Exception {
                IndexerNode node = IndexerNode.start(ServeConfig.local(0).withHttp(LIMITS));
                return new Running(
                        node.httpPort(),
                        node::close,
                        "/query",
                        "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}",
                        "/workers");
            }
        },
        SLOT_TRACKER {
            @Override
            Running start() throws Exception {
                Vertx vertx = Vertx.vertx();
                SlotTrackerVerticle tracker =
                        SlotTrackerCommand.deploy(vertx, SlotTrackerConfig.on("127.0.0.1", 0, LIMITS), () -> "");
                return new Running(
                        tracker.actualPort(),
                        () -> vertx.close()
                                .toCompletionStage()
                                .toCompletableFuture()
                                .get(10, TimeUnit.SECONDS),
                        "/add",
                        "{\"model_name\":\"m\",\"request_id\":\"r\",\"worker_id\":1,\"dp_rank\":0,"
                                + "\"sequence_hashes\":[1]}",
                        "/loads");
            }
        };

        abstract Running start() throws Exception;
    }

    private final List<RawHttp> sockets = new ArrayList<>();
    private Running server;

    @AfterEach
    void stop() throws Exception {
        sockets.forEach(RawHttp::close);
        if (server != null) {
            server.stop().close();
        }
    }

    private RawHttp connect() {
        RawHttp socket = new RawHttp(server.port());
        sockets.add(socket);
        return socket;
    }

    private String postHead(int contentLength) {
        return "POST " + server.postRoute() + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + contentLength + "\r\n\r\n";
    }

    private static void assertJsonError(RawHttp.Answer answer, int status, String fragment) {
        assertEquals(status, answer.status(), answer.headers() + "\n\n" + answer.body());
        assertEquals("application/json", answer.header("content-type"), answer.headers());
        JsonObject body = new JsonObject(answer.body());
        assertEquals(List.of("error"), List.copyOf(body.fieldNames()), answer.body());
        assertTrue(body.getString("error").contains(fragment), answer.body());
    }

    @ParameterizedTest
    @EnumSource(Server.class)
    void aConnectionThatSendsNothingIsClosed(Server which) throws Exception {
        server = which.start();
        assertTrue(connect().closedWithin(CLOSED_WITHIN));
    }

    @ParameterizedTest
    @EnumSource(Server.class)
    void aHeadTrickledByteByByteIsClosedThoughBytesKeepComing(Server which) throws Exception {
        server = which.start();
        RawHttp slow = connect();
        assertTrue(slow.send("GET /health HTTP/1.1\r\nHost: x\r\n"));
        assertTrue(
                slow.closedWhileTrickling(
                        "X".getBytes(StandardCharsets.US_ASCII), Duration.ofMillis(100), CLOSED_WITHIN),
                "a slowloris head must not hold its connection past the idle timeout");
    }

    @ParameterizedTest
    @EnumSource(Server.class)
    void aBodyThatStopsHalfWayIsAnswered408AndItsConnectionClosed(Server which) throws Exception {
        server = which.start();
        RawHttp slow = connect();
        String body = server.postBody();
        assertTrue(slow.send(postHead(body.length()) + body.substring(0, body.length() / 2)));
        RawHttp.Answer answer = slow.answerThenClose(CLOSED_WITHIN);
        assertJsonError(answer, 408, "did not arrive");
        assertEquals(200, new HttpJson(server.port()).get("/health").statusCode());
    }

    @ParameterizedTest
    @EnumSource(Server.class)
    void healthAnswersHeadAsItAnswersGet(Server which) throws Exception {
        server = which.start();
        HttpJson http = new HttpJson(server.port());
        assertEquals(200, http.send("HEAD", "/health").statusCode());
        assertEquals(200, http.get("/health").statusCode());
    }

    @ParameterizedTest
    @EnumSource(Server.class)
    void hundredsOfStalledConnectionsAreAllClosedWhileTheServerKeepsAnswering(Server which) throws Exception {
        server = which.start();
        List<RawHttp> stalled = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            RawHttp head = connect();
            assertTrue(head.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Partial: "));
            RawHttp body = connect();
            assertTrue(body.send(postHead(1000) + "{\"model_name\":"));
            stalled.add(head);
            stalled.add(body);
        }
        assertEquals(200, new HttpJson(server.port()).get("/health").statusCode(), "fresh clients are served");
        for (RawHttp s : stalled) {
            assertTrue(s.closedWithin(CLOSED_WITHIN), "a stalled connection stayed open");
        }
    }

    @ParameterizedTest
    @EnumSource(Server.class)
    void aKeepAliveConnectionIsServedThenClosedOnceIdle(Server which) throws Exception {
        server = which.start();
        RawHttp client = connect();
        for (int i = 0; i < 3; i++) {
            assertTrue(client.send(postHead(server.postBody().length()) + server.postBody()));
            RawHttp.Answer answer = client.answer(CLOSED_WITHIN);
            assertTrue(answer.status() < 500 && answer.status() != 408, answer.toString());
        }
        assertTrue(client.closedWithin(CLOSED_WITHIN));
    }

    @ParameterizedTest
    @EnumSource(Server.class)
    void whatTheFrameworkRefusesHasTheJsonErrorBody(Server which) throws Exception {
        server = which.start();
        String end = " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        assertRefused("GET /" + "a".repeat(10_000) + end, 414, "request line");
        assertRefused("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(10_000) + "\r\n\r\n", 431, "headers");
        assertRefused("NOT HTTP AT ALL\r\n\r\n", 400, "malformed HTTP request");
        assertRefused("GET /health HTTP/1.1\r\nno colon here\r\n\r\n", 400, "malformed HTTP request");
        assertRefused(
                postHead(2).replace("Content-Length: 2", "Content-Length: 2\r\nContent-Length: 3") + "{}",
                400,
                "Content-Length");
        assertRefused("GET /health HTTP/1.2\r\nHost: x\r\n\r\n", 501, "HTTP version");
        assertRefused("GET /health FOO/1.1\r\nHost: x\r\n\r\n", 501, "HTTP version");
        assertRefused("GET " + server.getRoute() + "?model_name=%zz" + end, 400, "invalid query string");
        assertRefused("GET " + server.getRoute() + "?%zz" + end, 400, "invalid query string");
        assertRefused("GET /health?%" + end, 400, "invalid query string");
        assertRefused(
                postHead(2)
                                .replace(" HTTP/1.1", "?x=%e9%zz HTTP/1.1")
                                .replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")
                        + "{}",
                400,
                "invalid query string");
        assertRefused("GET /wor%zzkers" + end, 400, "bad request");
        assertRefused(
                postHead(2).replace("\r\n\r\n", "\r\nExpect: tea\r\nConnection: close\r\n\r\n") + "{}",
                417,
                "expectation");
        assertEquals(200, new HttpJson(server.port()).get("/health").statusCode());
    }

    private void assertRefused(String request, int status, String fragment) {
        RawHttp client = connect();
        assertTrue(client.send(request));
        RawHttp.Answer answer = client.answerThenClose(CLOSED_WITHIN);
        assertNotNull(answer);
        assertJsonError(answer, status, fragment);
    }
}
