package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A real node on loopback plus the simulated engines a test starts, closed together: the engines first (so no
 * listener keeps reconnecting into a closed context), then the node. Everything registers in one partition.
 */
public final class IngestHarness implements AutoCloseable {
    public static final String MODEL = "m";
    public static final String ROUTING_GROUP = "default";
    /** Patience for ingest on a loaded machine (100,000 fuzzed messages beside other builds); ends when it holds. */
    public static final Duration WAIT = Duration.ofSeconds(60);

    private final IndexerNode node;
    private final HttpJson http;
    private final List<SimulatedEngine> engines = new ArrayList<>();

    private IngestHarness(IndexerNode node) {
        this.node = node;
        this.http = new HttpJson(node.httpPort());
    }

    public static IngestHarness start() throws Exception {
        return start(ServeConfig.local(0));
    }

    public static IngestHarness start(ServeConfig config) throws Exception {
        return new IngestHarness(IndexerNode.start(config));
    }

    public IndexerNode node() {
        return node;
    }

    public HttpJson http() {
        return http;
    }

    public EventCounters counters() {
        return node.counters();
    }

    /** Starts an engine that is closed with the harness. */
    public SimulatedEngine engine(EngineConfig config) {
        SimulatedEngine e = SimulatedEngine.start(config);
        engines.add(e);
        return e;
    }

    /** The /register body for an engine with its own live and replay endpoints. */
    public static JsonObject registration(SimulatedEngine e) {
        return RegisterClient.body(e, MODEL, ROUTING_GROUP);
    }

    public void register(JsonObject body) {
        HttpResponse<String> r = http.post("/register", body.encode());
        assertEquals(201, r.statusCode(), "register " + body + ": " + r.body());
    }

    /**
     * Registers the engine and waits until the indexer's subscription reached its publisher
     * (docs/protocol/zmq.md#slow-joiner).
     */
    public void registerAndSubscribe(SimulatedEngine e) throws InterruptedException {
        long before = e.subscriptions();
        register(registration(e));
        awaitSubscribed(e, before);
    }

    /** Waits for a subscription to {@code e} beyond the {@code before} it had. */
    public void awaitSubscribed(SimulatedEngine e, long before) throws InterruptedException {
        if (!e.awaitSubscribers(before + 1, WAIT)) {
            throw new AssertionError("no subscription reached " + e.endpoint() + "; workers: "
                    + http.get("/workers").body());
        }
    }

    public void post(String path, JsonObject body, int expectedStatus) {
        HttpResponse<String> r = http.post(path, body.encode());
        assertEquals(expectedStatus, r.statusCode(), "POST " + path + " " + body + ": " + r.body());
    }

    /** The canonical content of the partition's /dump. */
    public Set<HeldBlock> dump() {
        HttpResponse<String> r = http.get("/dump");
        assertEquals(200, r.statusCode(), r.body());
        return DumpBlocks.parse(r.body(), MODEL + ":" + ROUTING_GROUP);
    }

    /** The union of what the given engines hold; call after they are idle. */
    public static Set<HeldBlock> truth(SimulatedEngine... of) {
        Set<HeldBlock> out = new HashSet<>();
        for (SimulatedEngine e : of) {
            out.addAll(e.held());
        }
        return out;
    }

    /** Waits until every engine published its queued work. */
    public static void awaitIdle(SimulatedEngine... of) throws InterruptedException {
        for (SimulatedEngine e : of) {
            if (!e.awaitIdle(WAIT)) {
                throw new AssertionError("engine " + e.endpoint() + " not idle within " + WAIT);
            }
        }
    }

    /** Waits (replay may still be in flight) until the dump equals the engines' truth exactly. */
    public void awaitDumpEquals(String what, Set<HeldBlock> expected) {
        Object[] last = {null};
        try {
            Await.until(what, WAIT, () -> {
                Set<HeldBlock> d = dump();
                last[0] = d;
                return d.equals(expected);
            });
        } catch (AssertionError e) {
            @SuppressWarnings("unchecked")
            Set<HeldBlock> seen = (Set<HeldBlock>) last[0];
            throw new AssertionError(
                    e.getMessage() + ": " + DumpBlocks.diff(expected, seen == null ? Set.of() : seen)
                            + "\nwarnings: " + counters().warningSnapshot() + "\napplied: "
                            + counters().appliedSnapshot()
                            + "\nworkers: " + http.get("/workers").body(),
                    e);
        }
    }

    /** {@code listeners.<dpRank>} of an instance in GET /workers, or null if it is not listed. */
    public JsonObject listener(long instanceId, int dpRank) {
        JsonArray workers = new JsonArray(http.get("/workers").body());
        for (int i = 0; i < workers.size(); i++) {
            JsonObject w = workers.getJsonObject(i);
            if (DumpBlocks.u64(w.getValue("instance_id")) == instanceId) {
                return w.getJsonObject("listeners").getJsonObject(Integer.toString(dpRank));
            }
        }
        return null;
    }

    public String listenerStatus(long instanceId, int dpRank) {
        JsonObject l = listener(instanceId, dpRank);
        return l == null ? null : l.getString("status");
    }

    /** Distinct loopback ports that were free a moment ago (nothing listens on them). */
    public static int[] freePorts(int n) {
        return FreePort.distinct(n);
    }

    @Override
    public void close() {
        for (SimulatedEngine e : engines) {
            e.close();
        }
        node.close();
    }
}
