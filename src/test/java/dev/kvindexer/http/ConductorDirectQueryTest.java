package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.AccessLogConfig;
import dev.kvindexer.config.NetworkConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.LoopbackEngines;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.RawHttp;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C++ Conductor's msgpack {@code /query}, answered ahead of the router when its head is plain, answers exactly as
 * the router does, and is logged, measured, held within the network budget and guarded by {@code --auth-all} as every
 * routed request is; a head that is not plain (chunked, a query string, a body over the limit, no token) goes to the
 * router and gets its answer.
 */
class ConductorDirectQueryTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String MODEL = "direct-model";
    private static final int[] PROMPT = prompt(64);

    @TempDir
    Path dir;

    private IndexerNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void aPlainQueryIsAnsweredAsTheRouterAnswersItAndIsLoggedAndMeasured() throws Exception {
        Path log = dir.resolve("access.log");
        node = IndexerNode.start(ServeConfig.local(0)
                .withAccessLog(new AccessLogConfig(log, AccessLogConfig.DEFAULT_TRACE_ID_HEADER, false)));
        try (LoopbackEngines engines = new LoopbackEngines("http://127.0.0.1:" + node.httpPort(), MODEL)) {
            engines.registerConductor(WAIT);
            engines.store(0, PROMPT);
            byte[] body = engines.conductorQuery(PROMPT);
            engines.awaitMatched(body, Map.of(LoopbackEngines.instance(0), (long) PROMPT.length), WAIT);
            double before = requests();

            RawHttp.Answer direct = plain(body, "");
            RawHttp.Answer routed = chunked(body);
            assertEquals(200, direct.status(), direct.body());
            assertEquals("application/msgpack", direct.header("content-type"));
            assertEquals(routed.status(), direct.status());
            assertEquals(routed.header("content-type"), direct.header("content-type"));
            assertEquals(routed.body(), direct.body());
            assertEquals(
                    Map.of(LoopbackEngines.instance(0), (long) PROMPT.length),
                    LoopbackEngines.longestMatched(direct.body().getBytes(StandardCharsets.ISO_8859_1)));

            // A body that is no msgpack map: the C++ envelope's 400, the same both ways.
            byte[] notAMap = {(byte) 0x93, 1, 2, 3};
            RawHttp.Answer directError = plain(notAMap, "");
            RawHttp.Answer routedError = chunked(notAMap);
            assertEquals(400, directError.status(), directError.body());
            assertEquals(routedError.body(), directError.body());
            assertTrue(directError.body().contains("invalid_msgpack"), directError.body());

            assertEquals(before + 4, requests(), "every /query measured, whichever way it was answered");
            assertEquals(2, errors4xx(), "both 400s counted");
            Await.until(
                    "four /query lines in the access log",
                    WAIT,
                    () -> queryLines(log).size() == 4);
            List<String> lines = queryLines(log);
            assertEquals(
                    2, lines.stream().filter(l -> l.contains("\"status\":200")).count(), lines.toString());
            assertEquals(
                    2, lines.stream().filter(l -> l.contains("\"status\":400")).count(), lines.toString());
        }
    }

    @Test
    void aBodyInProgressIsHeldWithinTheBudgetAndGivenBackWhenItsClientGoes() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0).withNetwork(new NetworkConfig(16 << 20, Duration.ofSeconds(15))));
        HttpJson http = new HttpJson(node.httpPort());
        int declared = 1 << 20;
        try (RawHttp client = new RawHttp(node.httpPort())) {
            client.send("POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\nContent-Length: "
                    + declared + "\r\n\r\n\u0083");
            Await.until(
                    "the declared body held",
                    WAIT,
                    () -> MetricsPage.of(http).value("kvindexer_network_memory_held_bytes") == declared);
        }
        Await.until(
                "the body given back once its client closed",
                WAIT,
                () -> MetricsPage.of(http).value("kvindexer_network_memory_held_bytes") == 0);
        // A body over the route's limit is the router's 413, read no further.
        try (RawHttp client = new RawHttp(node.httpPort())) {
            client.send("POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\nContent-Length: "
                    + (HttpVerticle.QUERY_BODY_LIMIT + 1) + "\r\n\r\n");
            RawHttp.Answer refused = client.answer(WAIT);
            assertEquals(413, refused.status(), refused.body());
        }
    }

    @Test
    void withAuthAllAQueryWithoutTheTokenIsRefusedAndOneWithItAnswered() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0).withSecurity(new SecurityConfig("s3cret", true, null, null)));
        byte[] body = LoopbackEngines.conductorQuery(MODEL, PROMPT);
        RawHttp.Answer refused = plain(body, "");
        assertEquals(401, refused.status(), refused.body());
        assertTrue(refused.body().contains("Authorization: Bearer"), refused.body());
        RawHttp.Answer wrong = plain(body, "Authorization: Bearer guess\r\n");
        assertEquals(401, wrong.status(), wrong.body());
        RawHttp.Answer answered = plain(body, "Authorization: Bearer s3cret\r\n");
        assertEquals(200, answered.status(), answered.body());
        assertEquals("application/msgpack", answered.header("content-type"));
    }

    /** curl asks leave to send a large body, and would wait a second for it. */
    @Test
    void aClientThatExpectsLeaveToSendItsBodyGetsIt() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        byte[] body = LoopbackEngines.conductorQuery(MODEL, prompt(8192));
        try (RawHttp client = new RawHttp(node.httpPort())) {
            client.send(head("/query", "Content-Length: " + body.length + "\r\n", "Expect: 100-continue\r\n"));
            RawHttp.Answer leave = client.answer(WAIT);
            assertEquals(100, leave.status(), leave.headers());
            client.send(body);
            RawHttp.Answer answer = client.answer(WAIT);
            assertEquals(200, answer.status(), answer.body());
            assertEquals("application/msgpack", answer.header("content-type"));
        }
    }

    /** HTTP/1.0 has no interim answers: the router sends none, nor does the direct route. */
    @Test
    void anHttp10ClientThatExpectsLeaveGetsOnlyItsAnswer() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        byte[] body = LoopbackEngines.conductorQuery(MODEL, PROMPT);
        RawHttp.Answer answer = send(
                "POST /query HTTP/1.0\r\nHost: x\r\nContent-Type: application/msgpack\r\n"
                        + "Expect: 100-continue\r\nContent-Length: " + body.length + "\r\n\r\n",
                body);
        assertEquals(200, answer.status(), answer.headers());
        assertEquals("application/msgpack", answer.header("content-type"));
    }

    @Test
    void aQueryStringSendsTheRequestToTheRouter() throws Exception {
        node = IndexerNode.start(ServeConfig.local(0));
        byte[] body = LoopbackEngines.conductorQuery(MODEL, PROMPT);
        // The Dynamo flavor reads JSON only, whatever the bytes: the router's 415, which the direct route never gives.
        RawHttp.Answer answer = send(head("/query?flavor=dynamo", "Content-Length: " + body.length + "\r\n", ""), body);
        assertEquals(415, answer.status(), answer.body());
    }

    private static List<String> queryLines(Path log) {
        try {
            return Files.readAllLines(log).stream()
                    .filter(l -> l.contains("\"path\":\"/query\"") && l.contains("\"trace_id\":\"direct"))
                    .toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private RawHttp.Answer plain(byte[] body, String headers) {
        return send(head("/query", "Content-Length: " + body.length + "\r\n", headers), body);
    }

    /** {@code head} and then {@code body} on a connection of their own; the answer. */
    private RawHttp.Answer send(String head, byte[] body) {
        try (RawHttp client = new RawHttp(node.httpPort())) {
            client.send(head);
            client.send(body);
            return client.answer(WAIT);
        }
    }

    /** The same request with a chunked body, which only the router reads. */
    private RawHttp.Answer chunked(byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] head = head("/query", "Transfer-Encoding: chunked\r\n", "").getBytes(StandardCharsets.ISO_8859_1);
        out.writeBytes(head);
        out.writeBytes((Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(body);
        out.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        try (RawHttp client = new RawHttp(node.httpPort())) {
            client.send(out.toByteArray());
            return client.answer(WAIT);
        }
    }

    private static String head(String target, String framing, String headers) {
        return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\nX-Trace-Id: direct\r\n"
                + framing + headers + "\r\n";
    }

    private double requests() {
        return MetricsPage.of(new HttpJson(node.httpPort()))
                .value("dynamo_kvindexer_requests_total{endpoint=\"/query\",method=\"POST\"}");
    }

    private double errors4xx() {
        return MetricsPage.of(new HttpJson(node.httpPort()))
                .value("dynamo_kvindexer_errors_total{endpoint=\"/query\",status_class=\"4xx\"}");
    }

    private static int[] prompt(int n) {
        int[] tokens = new int[n];
        for (int i = 0; i < n; i++) {
            tokens[i] = 1_000 + i;
        }
        return tokens;
    }
}
