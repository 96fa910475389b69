package dev.kvindexer.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.DumpBlocks;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Gap repair from a peer (docs/protocol/recovery.md#gap-repair-from-a-peer), with real nodes and a simulated engine
 * whose replay ring is too small for what a paused listener missed: the node takes the peer's exact copy of the
 * stream and is exact again; with no peer holding the batches, or only peers that fail, the stream stays inexact and
 * nothing changes.
 */
class GapRepairTest {
    private static final long INSTANCE = 11;
    private static final int BLOCK = 16;
    /** Batches the engine can replay: fewer than a paused listener misses. */
    private static final int RING = 4;

    private static final String TOKEN = "gap-repair-token";
    private static final String DUMP_KEY = "m:default";

    private final List<AutoCloseable> open = new ArrayList<>();
    private int prompts;

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private IndexerNode node(UnaryOperator<ServeConfig> adjust) throws Exception {
        IndexerNode n = IndexerNode.start(adjust.apply(ServeConfig.local(0)));
        open.add(n);
        return n;
    }

    private SimulatedEngine engine() {
        SimulatedEngine e =
                SimulatedEngine.start(EngineConfig.local(INSTANCE, 0).withReplayCapacity(RING));
        open.add(e);
        return e;
    }

    private static String url(IndexerNode n) {
        return "http://127.0.0.1:" + n.httpPort();
    }

    private static HttpJson http(IndexerNode n) {
        return new HttpJson(n.httpPort()).withHeader("Authorization", "Bearer " + TOKEN);
    }

    private static void register(HttpJson http, SimulatedEngine e) {
        assertEquals(
                201,
                http.post("/register", RegisterClient.body(e, "m", "default").encode())
                        .statusCode());
    }

    /** A fresh prompt of two blocks: one batch of the engine. */
    private void submit(SimulatedEngine e, int n) {
        for (int p = 0; p < n; p++) {
            int seed = ++prompts;
            int[] tokens = new int[2 * BLOCK];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = seed * 100_000 + i;
            }
            e.submit(tokens);
        }
    }

    private static Set<HeldBlock> blocks(HttpJson http) {
        return DumpBlocks.parse(http.get("/dump").body(), DUMP_KEY);
    }

    private static void awaitHolds(String what, HttpJson http, SimulatedEngine e) throws InterruptedException {
        assertTrue(e.awaitIdle(Await.PATIENCE));
        Await.until(what, Await.PATIENCE, () -> blocks(http).equals(e.held()));
    }

    /** The stream's entry in /workers. */
    private static JsonObject stream(HttpJson http) {
        JsonArray workers = new JsonArray(http.get("/workers").body());
        return workers.getJsonObject(0).getJsonObject("listeners").getJsonObject("0");
    }

    private static double repairs(HttpJson http, String outcome) {
        return MetricsPage.of(http).value("kvindexer_gap_repairs_total{outcome=\"" + outcome + "\"}");
    }

    /**
     * The given nodes' listeners miss more batches than the engine's ring holds: paused while it publishes, then
     * resumed, and one more batch shows them the gap.
     */
    private void missBatches(SimulatedEngine e, HttpJson... nodes) throws InterruptedException {
        JsonObject stream = new JsonObject().put("instance_id", INSTANCE).put("dp_rank", 0);
        for (HttpJson n : nodes) {
            assertEquals(200, n.post("/test/pause_listener", stream.encode()).statusCode());
        }
        submit(e, 3 * RING);
        assertTrue(e.awaitIdle(Await.PATIENCE));
        long subscriptions = e.subscriptions();
        for (HttpJson n : nodes) {
            assertEquals(200, n.post("/test/resume_listener", stream.encode()).statusCode());
        }
        assertTrue(e.awaitSubscribers(subscriptions + nodes.length, Await.PATIENCE));
        for (HttpJson n : nodes) {
            Await.until(
                    "listener active again",
                    Await.PATIENCE,
                    () -> "active".equals(stream(n).getString("status")));
        }
        submit(e, 1);
        assertTrue(e.awaitIdle(Await.PATIENCE));
    }

    /**
     * Node A, then node B configured by {@code configOfB} (given A), both with the same token, subscribed to the engine
     * and holding what it holds.
     */
    private record TwoNodes(IndexerNode aNode, HttpJson a, HttpJson b) {}

    /** B's configuration when it has A, and only A, as its peer (--peers). */
    private static final Function<IndexerNode, UnaryOperator<ServeConfig>> PEERED_WITH_A =
            a -> c -> c.withPeers(List.of(url(a)));

    private TwoNodes twoNodes(SimulatedEngine e, Function<IndexerNode, UnaryOperator<ServeConfig>> configOfB)
            throws Exception {
        UnaryOperator<ServeConfig> token = c -> c.withSecurity(new SecurityConfig(TOKEN, false, null, null));
        IndexerNode a = node(token);
        IndexerNode b = node(c -> configOfB.apply(a).apply(token.apply(c)));
        register(http(a), e);
        register(http(b), e);
        assertTrue(e.awaitSubscribers(2, Await.PATIENCE));
        submit(e, 2);
        awaitHolds("A holds what the engine holds", http(a), e);
        awaitHolds("B holds what the engine holds", http(b), e);
        return new TwoNodes(a, http(a), http(b));
    }

    @Test
    void batchesTheEngineCannotReplayComeBackFromAPeerThatHasThem() throws Exception {
        SimulatedEngine e = engine();
        TwoNodes nodes = twoNodes(e, PEERED_WITH_A);
        HttpJson a = nodes.a();
        HttpJson b = nodes.b();

        missBatches(e, b);
        Await.until("B repaired from A", Await.PATIENCE, () -> repairs(b, "repaired") == 1);
        awaitHolds("B holds what the engine holds", b, e);
        assertEquals(blocks(a), blocks(b));
        assertEquals(watermarks(a), watermarks(b));
        JsonObject stream = stream(b);
        assertFalse(stream.containsKey("exact"), stream.encode());
        assertTrue(
                stream.getString("last_error")
                        .matches("batches \\[\\d+, \\d+\\) lost by the engine's replay; repaired from peer "
                                + url(nodes.aNode())),
                stream.encode());
        assertEquals(0, repairs(b, "no_peer") + repairs(b, "failed"));
        assertEquals(0, MetricsPage.of(b).value("kvindexer_inexact_streams"));

        // The stream goes on from the copy as usual.
        submit(e, 2);
        awaitHolds("B follows the engine after the repair", b, e);
        assertEquals(watermarks(a), watermarks(b));
    }

    private static JsonArray watermarks(HttpJson http) {
        return new JsonObject(http.get("/dump").body()).getJsonObject(DUMP_KEY).getJsonArray("watermarks");
    }

    @Test
    void whenThePeerMissedTheBatchesTooTheStreamStaysInexact() throws Exception {
        SimulatedEngine e = engine();
        TwoNodes nodes = twoNodes(e, PEERED_WITH_A);
        HttpJson a = nodes.a();
        HttpJson b = nodes.b();

        missBatches(e, a, b);
        Await.until("B found no peer", Await.PATIENCE, () -> repairs(b, "no_peer") == 1);
        Await.until("A, with no peer at all, neither", Await.PATIENCE, () -> repairs(a, "no_peer") == 1);
        JsonObject stream = stream(b);
        assertEquals(false, stream.getBoolean("exact"), stream.encode());
        assertTrue(stream.getString("last_error").endsWith("; no peer holds them: stream inexact"), stream.encode());
        assertNotEquals(e.held(), blocks(b), "what the engine could not replay is still missing");
        assertEquals(0, repairs(b, "repaired") + repairs(b, "failed"));
    }

    /** Peers that answer 500, garbage, or more than the node's recovery limit. */
    private HttpServer brokenPeers(List<String> asked) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/error", x -> {
            asked.add(x.getRequestURI() + " " + x.getRequestHeaders().getFirst("Authorization"));
            x.sendResponseHeaders(500, -1);
            x.close();
        });
        server.createContext("/garbage", x -> answer(x, new byte[] {'K', 'V', 'I', 'X', 9, 9, 9, 9, 1, 2, 3}));
        server.createContext("/huge", x -> {
            byte[] doc = SnapshotWriter.document(new PartitionKey("m", "default"), BLOCK, new byte[256 * 1024]);
            answer(x, doc);
        });
        server.start();
        open.add(() -> server.stop(0));
        return server;
    }

    private static void answer(com.sun.net.httpserver.HttpExchange x, byte[] body) throws IOException {
        x.getResponseHeaders().add("content-type", SnapshotWriter.MEDIA_TYPE);
        x.sendResponseHeaders(200, body.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(body);
        } catch (IOException cutOff) {
            // The node stopped reading at its limit.
        }
        x.close();
    }

    private static List<String> brokenUrls(HttpServer server) {
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        return List.of(base + "/error", base + "/garbage", base + "/huge");
    }

    @Test
    void brokenPeersChangeNothingAndTheNextPeerRepairs() throws Exception {
        List<String> asked = new CopyOnWriteArrayList<>();
        HttpServer broken = brokenPeers(asked);
        SimulatedEngine e = engine();
        TwoNodes nodes = twoNodes(
                e,
                a -> c -> c.withPeers(brokenUrls(broken))
                        .withRecovery(new RecoveryConfig(64 * 1024, Duration.ofSeconds(30))));
        HttpJson b = nodes.b();
        String a = url(nodes.aNode());

        missBatches(e, b);
        Await.until("B's repair failed", Await.PATIENCE, () -> repairs(b, "failed") == 1);
        assertEquals(
                List.of("/error/dump?instance_id=11 Bearer " + TOKEN),
                asked.stream().filter(r -> r.contains("instance_id")).toList(),
                "the peer is asked for the instance, with the token");
        JsonObject stream = stream(b);
        assertEquals(false, stream.getBoolean("exact"), stream.encode());
        String error = stream.getString("last_error");
        assertTrue(error.contains("; no peer could give them ("), error);
        assertTrue(error.endsWith("): stream inexact"), error);
        assertNotEquals(e.held(), blocks(b), "nothing was installed from a broken peer");

        // The same node with a good peer after the broken ones: the next gap is repaired from it.
        assertEquals(
                201,
                b.post("/register_peer", new JsonObject().put("url", a).encode())
                        .statusCode());
        missBatches(e, b);
        Await.until("B repaired from A", Await.PATIENCE, () -> repairs(b, "repaired") == 1);
        awaitHolds("B holds what the engine holds", b, e);
        assertTrue(stream(b).getString("last_error").endsWith("repaired from peer " + a));
        assertEquals(1, repairs(b, "failed"), "a peer that repairs makes the broken ones before it no failure");
    }
}
