package dev.kvindexer.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.partition.PartitionRef;
import dev.kvindexer.partition.PartitionSnapshot;
import dev.kvindexer.partition.PartitionView;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What the cluster tests share: simulated engines in partition {@value #PARTITION} (closed with the fixture), and
 * HTTP views of nodes by port (in this JVM or child processes alike): registering, /workers and /dump as block sets.
 */
public final class ClusterFixture implements AutoCloseable {
    public static final String MODEL = "m";
    public static final String PARTITION = MODEL + ":default";
    public static final int BLOCK = 16;
    public static final int CAPACITY = 96;
    /** Patience for a cluster to converge on a loaded machine; every wait ends as soon as its condition holds. */
    public static final Duration WAIT = Duration.ofSeconds(60);

    private final List<SimulatedEngine> engines = new ArrayList<>();
    /** One client per node: the polls run every 10 ms, and a JDK client per request means a thread each. */
    private final Map<Integer, HttpJson> clients = new ConcurrentHashMap<>();

    public SimulatedEngine engine(long instanceId) {
        return engine(EngineConfig.local(instanceId, 0));
    }

    public SimulatedEngine engine(EngineConfig base) {
        SimulatedEngine e =
                SimulatedEngine.start(base.withCache(BLOCK, CAPACITY, 0).withFormat(BatchEncoder.Format.VLLM_MAP));
        synchronized (engines) {
            engines.add(e);
        }
        return e;
    }

    public HttpJson http(int port) {
        return clients.computeIfAbsent(port, HttpJson::new);
    }

    public void register(int port, SimulatedEngine e) {
        HttpResponse<String> r = http(port)
                .post("/register", RegisterClient.body(e, MODEL, "default").encode());
        assertEquals(201, r.statusCode(), r.body());
    }

    public static void awaitSubscribers(SimulatedEngine e, long n) throws InterruptedException {
        assertTrue(
                e.awaitSubscribers(n, WAIT),
                "expected " + n + " subscriptions on " + e.endpoint() + ", saw " + e.subscriptions());
    }

    public static void awaitIdle(SimulatedEngine... of) throws InterruptedException {
        for (SimulatedEngine e : of) {
            assertTrue(e.awaitIdle(WAIT), "engine " + e.endpoint() + " idle");
        }
    }

    public static Set<HeldBlock> truth(SimulatedEngine... of) {
        Set<HeldBlock> out = new HashSet<>();
        for (SimulatedEngine e : of) {
            out.addAll(e.held());
        }
        return out;
    }

    public Set<HeldBlock> blocks(int port) {
        return DumpBlocks.parse(http(port).get("/dump").body(), PARTITION);
    }

    /** Waits until the node on {@code port} holds exactly {@code expected}; {@code context} is added to a failure. */
    public void awaitBlocks(String what, int port, Set<HeldBlock> expected, Supplier<String> context) {
        awaitSet(what, () -> blocks(port), expected, Set::equals, context);
    }

    /** Waits until the node on {@code port} holds exactly {@code expected} of {@code worker}'s blocks. */
    public void awaitWorkerBlocks(
            String what, int port, long worker, Set<HeldBlock> expected, Supplier<String> context) {
        awaitSet(what, () -> ofWorker(blocks(port), worker), ofWorker(expected, worker), Set::equals, context);
    }

    /** Waits until the node on {@code port} holds every block of {@code included}, whatever else it holds. */
    public void awaitBlocksInclude(String what, int port, Set<HeldBlock> included, Supplier<String> context) {
        awaitSet(what, () -> blocks(port), included, (expected, seen) -> seen.containsAll(expected), context);
    }

    /** The blocks of {@code blocks} that {@code worker} holds. */
    public static Set<HeldBlock> ofWorker(Set<HeldBlock> blocks, long worker) {
        Set<HeldBlock> out = new HashSet<>();
        blocks.stream().filter(b -> b.worker() == worker).forEach(out::add);
        return out;
    }

    /**
     * The blocks of the partition a node hosts itself; in sharded mode its /dump gathers the whole index from every
     * node instead.
     */
    public Set<HeldBlock> hostedBlocks(IndexerNode node) {
        PartitionRef p =
                node.registry().partition(new PartitionKey(MODEL, "default")).orElse(null);
        if (p == null) {
            return Set.of();
        }
        PartitionRef hosted = PartitionView.hostedOf(p);
        try {
            PartitionSnapshot snapshot = await(hosted.snapshot(PartitionSnapshot.Order.BREADTH_FIRST));
            return DumpBlocks.parse(
                    "{\"" + PARTITION + "\":" + DumpBlocks.json(hosted.blockSize(), snapshot) + "}", PARTITION);
        } catch (Exception e) {
            throw new AssertionError("the hosted partition's dump failed", e);
        }
    }

    /**
     * Waits until the placement has settled on the nodes on {@code ports}: each of {@code instances} registered
     * instances is served (not remote) by exactly {@code copies} of them.
     */
    public void awaitPlaced(List<Integer> ports, int instances, int copies) {
        Map<Long, Integer> served = new HashMap<>();
        try {
            Await.until("each instance served by " + copies + " nodes", WAIT, () -> {
                served.clear();
                for (int port : ports) {
                    JsonArray workers = new JsonArray(workers(port));
                    for (int i = 0; i < workers.size(); i++) {
                        JsonObject w = workers.getJsonObject(i);
                        if (!"remote".equals(w.getString("status"))) {
                            served.merge(DumpBlocks.u64(w.getValue("instance_id")), 1, Integer::sum);
                        }
                    }
                }
                return served.size() == instances && served.values().stream().allMatch(c -> c == copies);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + served, e);
        }
    }

    /** Waits until the partition {@code node} hosts holds exactly {@code expected}. */
    public void awaitHostedBlocks(String what, IndexerNode node, Set<HeldBlock> expected, Supplier<String> context) {
        awaitSet(what, () -> hostedBlocks(node), expected, Set::equals, context);
    }

    /** Waits until {@code done} holds of {@code expected} and what {@code source} gives. */
    private static void awaitSet(
            String what,
            Supplier<Set<HeldBlock>> source,
            Set<HeldBlock> expected,
            java.util.function.BiPredicate<Set<HeldBlock>, Set<HeldBlock>> done,
            Supplier<String> context) {
        Object[] last = {Set.of()};
        try {
            Await.until(what, WAIT, () -> {
                Set<HeldBlock> now = source.get();
                last[0] = now;
                return done.test(expected, now);
            });
        } catch (AssertionError e) {
            @SuppressWarnings("unchecked")
            Set<HeldBlock> seen = (Set<HeldBlock>) last[0];
            throw new AssertionError(e.getMessage() + ": " + DumpBlocks.diff(expected, seen) + context.get(), e);
        }
    }

    /** Dynamo's /query of a prompt's tokens in partition {@value #PARTITION}, answered by the node on {@code port}. */
    public HttpResponse<String> query(int port, int[] prompt) {
        JsonArray tokens = new JsonArray();
        for (int t : prompt) {
            tokens.add(t);
        }
        return http(port)
                .post(
                        "/query",
                        new JsonObject()
                                .put("model_name", MODEL)
                                .put("token_ids", tokens)
                                .encode());
    }

    public String workers(int port) {
        return http(port).get("/workers").body();
    }

    /**
     * /workers as every node must agree on it: a listener's error, current or previous, and its time are what
     * happened to that node's own socket (a replay that came back short, say), so they are left out.
     */
    public String sharedWorkers(int port) {
        JsonArray workers = new JsonArray(workers(port));
        for (int i = 0; i < workers.size(); i++) {
            JsonObject listeners = workers.getJsonObject(i).getJsonObject("listeners");
            for (String rank : listeners.fieldNames()) {
                for (String member :
                        new String[] {"last_error", "last_error_at", "previous_error", "previous_error_at"}) {
                    listeners.getJsonObject(rank).remove(member);
                }
            }
        }
        return workers.encode();
    }

    /**
     * As {@link #sharedWorkers}, without listener states: in a sharded cluster a node shows the instances it does not
     * hold as {@code remote}, so only the registrations themselves are shared.
     */
    public String sharedRegistrations(int port) {
        JsonArray workers = new JsonArray(sharedWorkers(port));
        for (int i = 0; i < workers.size(); i++) {
            JsonObject w = workers.getJsonObject(i);
            w.remove("status");
            JsonObject listeners = w.getJsonObject("listeners");
            for (String rank : listeners.fieldNames()) {
                listeners.getJsonObject(rank).remove("status");
            }
        }
        return workers.encode();
    }

    public int workerCount(int port) {
        return new JsonArray(workers(port)).size();
    }

    /**
     * Waits until every node knows all {@code instances} and serves some of them but not all (the others remote):
     * a sharded placement whose queries must cross nodes.
     */
    public void awaitSplit(List<IndexerNode> nodes, int instances) {
        Await.until(
                "each node serves part of the engines, not all",
                WAIT,
                () -> nodes.stream().allMatch(n -> {
                    long remote = new JsonArray(workers(n.httpPort()))
                            .stream()
                                    .filter(w -> "remote".equals(((JsonObject) w).getString("status")))
                                    .count();
                    return remote > 0 && remote < instances && workerCount(n.httpPort()) == instances;
                }));
    }

    public static <T> T await(Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        synchronized (engines) {
            engines.forEach(SimulatedEngine::close);
            engines.clear();
        }
    }
}
