package dev.kvindexer.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.HeldBlock;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Sharded clusters of three real nodes: each instance's blocks live on R nodes only, and a query on any node answers
 * exactly what a standalone node fed the same engines answers, also after a node leaves.
 */
class ShardedClusterTest {
    private static final int ENGINES = 8;
    private static final int SHORT_RING = 3;

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();
    private IndexerNode reference;

    @AfterEach
    void stop() {
        fixture.close();
        cluster.close();
        if (reference != null) {
            reference.close();
        }
    }

    private IndexerNode node(int replicationFactor) throws Exception {
        // Reconciles (and shard hand-overs) every second, so a test need not wait for the default ten.
        return cluster.start(c -> c.withCluster(
                c.cluster().withReplicationFactor(replicationFactor).withReconcileInterval(Duration.ofSeconds(1))));
    }

    private List<IndexerNode> start(int nodes, int replicationFactor) throws Exception {
        List<IndexerNode> out = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            out.add(node(replicationFactor));
        }
        Await.until(
                "partition table settled",
                ClusterFixture.WAIT,
                () -> out.stream()
                        .allMatch(n -> n.hazelcast().getPartitionService().isClusterSafe()));
        reference = IndexerNode.start(ServeConfig.local(0));
        return out;
    }

    /** Engines registered through the cluster's first node and with the reference, each fed prompts. */
    private List<SimulatedEngine> feed(List<IndexerNode> nodes, int replicationFactor, List<int[]> prompts)
            throws Exception {
        return feed(nodes, replicationFactor, prompts, EngineConfig.local(0, 0).replayCapacity());
    }

    /** As above, with engines that can replay only their last {@code ring} batches. */
    private List<SimulatedEngine> feed(List<IndexerNode> nodes, int replicationFactor, List<int[]> prompts, int ring)
            throws Exception {
        List<SimulatedEngine> engines = new ArrayList<>();
        for (int i = 0; i < ENGINES; i++) {
            SimulatedEngine e = fixture.engine(EngineConfig.local(101 + i, 0).withReplayCapacity(ring));
            fixture.register(nodes.get(0).httpPort(), e);
            fixture.register(reference.httpPort(), e);
            engines.add(e);
        }
        for (SimulatedEngine e : engines) {
            ClusterFixture.awaitSubscribers(e, replicationFactor + 1);
        }
        if (replicationFactor != ClusterConfig.FULL) {
            awaitBalanced(nodes, replicationFactor);
        }
        SyntheticPrompts source = SyntheticPrompts.standard(11, ClusterFixture.BLOCK);
        for (int i = 0; i < 60; i++) {
            int[] p = source.next();
            prompts.add(p);
            engines.get(i % ENGINES).submit(p);
        }
        ClusterFixture.awaitIdle(engines.toArray(SimulatedEngine[]::new));
        fixture.awaitBlocks(
                "the reference holds what the engines hold",
                reference.httpPort(),
                ClusterFixture.truth(engines.toArray(SimulatedEngine[]::new)),
                () -> "");
        return engines;
    }

    /**
     * Once the placement has settled, each instance is held on exactly R nodes and each node serves within one of
     * R x instances / N of them.
     */
    private void awaitBalanced(List<IndexerNode> nodes, int replicationFactor) {
        Map<IndexerNode, Set<Long>> held = new HashMap<>();
        try {
            Await.until("each instance on R nodes, each node its share within one", ClusterFixture.WAIT, () -> {
                held.clear();
                Map<Long, Integer> copies = new HashMap<>();
                for (IndexerNode n : nodes) {
                    held.put(n, heldHere(n));
                    held.get(n).forEach(w -> copies.merge(w, 1, Integer::sum));
                }
                double share = (double) replicationFactor * ENGINES / nodes.size();
                return copies.size() == ENGINES
                        && copies.values().stream().allMatch(c -> c == replicationFactor)
                        && held.values().stream().allMatch(h -> Math.abs(h.size() - share) < 1)
                        && placementAgreed(nodes, held);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + held.values(), e);
        }
    }

    /**
     * Every node names the same holders for every instance, and they are the nodes serving it: a balanced moment seen
     * while a node still lacked a registration is not yet the placement the cluster settles on.
     */
    private boolean placementAgreed(List<IndexerNode> nodes, Map<IndexerNode, Set<Long>> held) {
        Map<String, Set<Long>> servedBy = new HashMap<>();
        Map<Long, Set<String>> named = new HashMap<>();
        for (IndexerNode n : nodes) {
            JsonObject overview =
                    new JsonObject(fixture.http(n.httpPort()).get("/overview").body());
            servedBy.put(overview.getJsonObject("node").getString("node_id"), held.get(n));
            JsonArray workers = overview.getJsonArray("workers");
            if (workers.size() != ENGINES) {
                return false;
            }
            for (Object o : workers) {
                JsonObject w = (JsonObject) o;
                if (!w.containsKey("shard_holders")) {
                    continue; // full replicas: every node serves every instance
                }
                Set<String> holders = new HashSet<>();
                w.getJsonArray("shard_holders").forEach(h -> holders.add((String) h));
                if (!holders.equals(named.computeIfAbsent(Long.parseLong(w.getString("instance_id")), k -> holders))) {
                    return false;
                }
            }
        }
        return named.entrySet().stream()
                .allMatch(e -> servedBy.entrySet().stream()
                        .allMatch(s -> e.getValue().contains(s.getKey())
                                == s.getValue().contains(e.getKey())));
    }

    private HttpResponse<String> query(IndexerNode node, int[] prompt) {
        return fixture.query(node.httpPort(), prompt);
    }

    /** Every node answers every prompt as the reference does. */
    private void awaitExactAnswers(List<IndexerNode> nodes, List<int[]> prompts) {
        Await.until("every node answers like the reference", ClusterFixture.WAIT, () -> {
            for (int[] p : prompts) {
                String expected = query(reference, p).body();
                for (IndexerNode n : nodes) {
                    HttpResponse<String> r = query(n, p);
                    if (r.statusCode() != 200
                            || !expected.equals(r.body())
                            || r.headers()
                                    .firstValue("x-kvindexer-missing-instances")
                                    .isPresent()) {
                        return false;
                    }
                }
            }
            return true;
        });
    }

    /** A prompt's local block hashes, as /query computes them for a request without LoRA or salt. */
    private static JsonArray localHashes(int[] prompt) {
        JsonArray out = new JsonArray();
        for (long h : BlockHasher.localHashes(prompt, ClusterFixture.BLOCK, BlockHasher.seedFor(null, null))) {
            out.add(h);
        }
        return out;
    }

    /** Instance ids whose listeners this node runs (the others are remote), from /workers. */
    private Set<Long> heldHere(IndexerNode node) {
        Set<Long> out = new HashSet<>();
        JsonArray workers = new JsonArray(fixture.workers(node.httpPort()));
        for (int i = 0; i < workers.size(); i++) {
            JsonObject w = workers.getJsonObject(i);
            if (!"remote".equals(w.getString("status"))) {
                out.add(Long.parseLong(String.valueOf(w.getValue("instance_id"))));
            }
        }
        return out;
    }

    @Test
    void withTwoReplicasEachInstanceLivesOnTwoNodesAndEveryNodeAnswersExactlyThroughALeave() throws Exception {
        List<IndexerNode> nodes = start(3, 2);
        List<int[]> prompts = new ArrayList<>();
        List<SimulatedEngine> engines = feed(nodes, 2, prompts);

        Map<Long, Integer> holders = new HashMap<>();
        Set<HeldBlock> union = new HashSet<>();
        for (IndexerNode n : nodes) {
            Set<Long> here = heldHere(n);
            here.forEach(w -> holders.merge(w, 1, Integer::sum));
            Set<HeldBlock> blocks = fixture.hostedBlocks(n);
            assertTrue(
                    blocks.stream().allMatch(b -> here.contains(b.worker())), "a node holds only its shards' blocks");
            union.addAll(blocks);
        }
        Set<HeldBlock> everything = ClusterFixture.truth(engines.toArray(SimulatedEngine[]::new));
        for (IndexerNode n : nodes) {
            assertEquals(everything, fixture.blocks(n.httpPort()), "/dump on any node holds the whole index");
        }
        for (SimulatedEngine e : engines) {
            assertEquals(2, holders.get(e.instanceId()), "instance " + e.instanceId() + " on two nodes: " + holders);
        }
        assertEquals(ClusterFixture.truth(engines.toArray(SimulatedEngine[]::new)), union);
        // The dashboard's /overview names each instance's shard holders, this node among them exactly when it holds it.
        for (IndexerNode n : nodes) {
            JsonObject overview =
                    new JsonObject(fixture.http(n.httpPort()).get("/overview").body());
            assertEquals(true, overview.getJsonObject("cluster").getBoolean("sharded"));
            assertEquals(
                    3, overview.getJsonObject("cluster").getJsonArray("members").size());
            String self = overview.getJsonObject("node").getString("node_id");
            Set<Long> here = heldHere(n);
            for (Object o : overview.getJsonArray("workers")) {
                JsonObject w = (JsonObject) o;
                JsonArray shardHolders = w.getJsonArray("shard_holders");
                assertEquals(2, shardHolders.size(), w.encode());
                assertEquals(
                        here.contains(Long.parseLong(w.getString("instance_id"))),
                        shardHolders.contains(self),
                        w.encode());
            }
        }
        awaitExactAnswers(nodes, prompts);
        for (IndexerNode n : nodes) {
            MetricsPage m = MetricsPage.of(fixture.http(n.httpPort()));
            if (heldHere(n).size() < ENGINES) {
                assertTrue(m.value("kvindexer_shard_scattered_queries_total") > 0, "a node lacking shards asks others");
            }
            assertEquals(
                    0, m.value("kvindexer_shard_retries_total"), "a healthy cluster asks each shard's holder first");
        }

        // What another member sends is untrusted: malformed bytes are refused and counted, and queries go on.
        IndexerNode target = nodes.get(1);
        String address = ShardQueries.ADDRESS_PREFIX
                + new ShardPlacement(target.hazelcast(), 2, target.registry()::instances).localId();
        Throwable refused = ClusterFixture.await(nodes.get(0)
                .vertx()
                .eventBus()
                .request(
                        address,
                        Buffer.buffer()
                                .appendByte((byte) 1)
                                .appendByte((byte) 0)
                                .appendInt(Integer.MAX_VALUE))
                .transform(ar -> Future.succeededFuture(ar.cause())));
        assertTrue(refused instanceof ReplyException r && r.failureCode() == 400, String.valueOf(refused));
        assertEquals(
                1,
                MetricsPage.of(fixture.http(target.httpPort()))
                        .value("kvindexer_cluster_values_rejected_total" + "{source=\"" + ShardQueries.REJECTED_SOURCE
                                + "\",reason=\"invalid\"}"));
        awaitExactAnswers(nodes, prompts.subList(0, 5));

        // The Mooncake Conductor's lookup by rolling sequence hashes gathers every shard too.
        for (int[] p : prompts.subList(0, 10)) {
            long[] local = BlockHasher.localHashes(p, ClusterFixture.BLOCK, BlockHasher.seedFor(null, null));
            JsonArray seq = new JsonArray();
            for (long h : BlockHasher.sequenceHashes(local)) {
                seq.add(Long.toUnsignedString(h));
            }
            String body = new JsonObject()
                    .put("model", ClusterFixture.MODEL)
                    .put("seq_hashes", seq)
                    .encode();
            String expected = fixture.http(reference.httpPort())
                    .post("/query_by_hash", body)
                    .body();
            assertTrue(expected.contains("10"), expected);
            for (IndexerNode n : nodes) {
                assertEquals(
                        expected,
                        fixture.http(n.httpPort()).post("/query_by_hash", body).body());
            }
        }
        // Dynamo's remote-indexer lookup, tier by tier, gathers every shard too.
        for (int[] p : prompts.subList(0, 10)) {
            String body = new JsonObject()
                    .put("block_hashes", localHashes(p))
                    .put("model_name", ClusterFixture.MODEL)
                    .encode();
            String expected = fixture.http(reference.httpPort())
                    .post("/query_tiered_by_hash", body)
                    .body();
            assertTrue(expected.contains("\"worker_id\""), expected);
            for (IndexerNode n : nodes) {
                assertEquals(
                        expected,
                        fixture.http(n.httpPort())
                                .post("/query_tiered_by_hash", body)
                                .body());
            }
        }

        cluster.stop(nodes.get(1));
        List<IndexerNode> left = List.of(nodes.get(0), nodes.get(2));
        awaitExactAnswers(left, prompts);
        // Two nodes left and two replicas wanted: the shards the leaver held are handed to the other survivor.
        Await.until(
                "both survivors hold every instance",
                ClusterFixture.WAIT,
                () -> left.stream().allMatch(n -> heldHere(n).size() == ENGINES));
        Set<HeldBlock> truth = ClusterFixture.truth(engines.toArray(SimulatedEngine[]::new));
        for (IndexerNode n : left) {
            fixture.awaitHostedBlocks("a survivor holds every block", n, truth, () -> "");
        }
        awaitExactAnswers(left, prompts);
    }

    @Test
    void withATokenNodesTakeOnlySealedShardMessages() throws Exception {
        String token = "s3cret";
        List<IndexerNode> nodes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            nodes.add(cluster.start(c -> c.withCluster(c.cluster().withReplicationFactor(1))
                    .withSecurity(new SecurityConfig(token, false, null, null))));
        }
        IndexerNode target = nodes.get(1);
        String address = ShardQueries.ADDRESS_PREFIX
                + new ShardPlacement(target.hazelcast(), 1, target.registry()::instances).localId();
        Buffer query = ShardQueryCodec.encode(new ShardQueryCodec.Request(
                new PartitionKey(ClusterFixture.MODEL, "default"), ShardQueryCodec.LOCAL, new long[0], new long[] {101
                }));

        Throwable unsigned = ClusterFixture.await(nodes.get(0)
                .vertx()
                .eventBus()
                .request(address, query)
                .transform(ar -> Future.succeededFuture(ar.cause())));
        assertTrue(unsigned instanceof ReplyException r && r.failureCode() == 401, String.valueOf(unsigned));
        assertEquals(
                1,
                MetricsPage.of(fixture.http(target.httpPort()))
                        .value("kvindexer_cluster_values_rejected_total" + "{source=\"" + ShardQueries.REJECTED_SOURCE
                                + "\",reason=\"bad_signature\"}"));

        ShardSeal seal = new ShardSeal(token);
        Buffer sealed = seal.request(ShardQueries.QUERY, query);
        Buffer reply = ClusterFixture.await(nodes.get(0).vertx().eventBus().<Buffer>request(address, sealed))
                .body();
        ShardQueryCodec.Reply answer = ShardQueryCodec.decodeReply(seal.openReply(ShardQueries.QUERY, sealed, reply));
        assertEquals(0, answer.served().length, "nothing registered, nothing served, but answered");
    }

    @Test
    void fourNodesWithTwoReplicasHoldEachInstanceTwiceAndAnswerExactly() throws Exception {
        List<IndexerNode> nodes = start(4, 2);
        List<int[]> prompts = new ArrayList<>();
        List<SimulatedEngine> engines = feed(nodes, 2, prompts);
        Map<Long, Integer> holders = new HashMap<>();
        for (IndexerNode n : nodes) {
            heldHere(n).forEach(w -> holders.merge(w, 1, Integer::sum));
        }
        for (SimulatedEngine e : engines) {
            assertEquals(2, holders.get(e.instanceId()), "instance " + e.instanceId() + " on two nodes: " + holders);
        }
        awaitExactAnswers(nodes, prompts);
        assertEquals(
                ClusterFixture.truth(engines.toArray(SimulatedEngine[]::new)),
                fixture.blocks(nodes.get(3).httpPort()));
    }

    @Test
    void fullReplicationHoldsEverythingEverywhereAndNeverScatters() throws Exception {
        List<IndexerNode> nodes = start(3, ClusterConfig.FULL);
        List<int[]> prompts = new ArrayList<>();
        feed(nodes, 3, prompts);
        for (IndexerNode n : nodes) {
            assertEquals(ENGINES, heldHere(n).size(), "a full replica listens to every engine");
        }
        awaitExactAnswers(nodes, prompts);
        for (IndexerNode n : nodes) {
            assertEquals(
                    0, MetricsPage.of(fixture.http(n.httpPort())).value("kvindexer_shard_scattered_queries_total"));
        }
    }

    @Test
    void aJoiningNodeTakesOverItsShardsWithTheirHistoryAndTheFormerHoldersLetGo() throws Exception {
        List<IndexerNode> nodes = new ArrayList<>(start(2, 2));
        List<int[]> prompts = new ArrayList<>();
        // The engines replay only their last few batches and published more before the join, so the history of a
        // shard on the new node can only come from the hand-over's snapshot.
        List<SimulatedEngine> engines = feed(nodes, 2, prompts, SHORT_RING);
        for (SimulatedEngine e : engines) {
            assertTrue(
                    e.totalBatches() > 2 * SHORT_RING, "engine " + e.instanceId() + " published " + e.totalBatches());
        }
        awaitExactAnswers(nodes, prompts);

        IndexerNode third = node(2);
        nodes.add(third);
        Await.until("each instance on exactly two of three nodes, some on the new one", ClusterFixture.WAIT, () -> {
            Map<Long, Integer> count = new HashMap<>();
            for (IndexerNode n : nodes) {
                heldHere(n).forEach(w -> count.merge(w, 1, Integer::sum));
            }
            return !heldHere(third).isEmpty()
                    && count.size() == ENGINES
                    && count.values().stream().allMatch(c -> c == 2);
        });
        // Published while and after the shards moved: the new holder resumes each stream after its snapshot.
        SyntheticPrompts more = SyntheticPrompts.standard(23, ClusterFixture.BLOCK);
        for (int i = 0; i < 30; i++) {
            int[] p = more.next();
            prompts.add(p);
            engines.get(i % ENGINES).submit(p);
        }
        ClusterFixture.awaitIdle(engines.toArray(SimulatedEngine[]::new));
        Set<HeldBlock> truth = ClusterFixture.truth(engines.toArray(SimulatedEngine[]::new));
        fixture.awaitBlocks("the reference holds what the engines hold", reference.httpPort(), truth, () -> "");
        for (IndexerNode n : nodes) {
            Set<Long> here = heldHere(n);
            Set<HeldBlock> expected = new HashSet<>();
            truth.stream().filter(b -> here.contains(b.worker())).forEach(expected::add);
            fixture.awaitHostedBlocks(
                    "a node holds exactly its shards' blocks, history included",
                    n,
                    expected,
                    () -> " on the node holding " + here + " (now " + heldHere(n) + "), workers "
                            + fixture.workers(n.httpPort()) + ", warnings "
                            + n.counters().warningSnapshot() + ", applied "
                            + n.counters().appliedSnapshot());
        }
        awaitExactAnswers(nodes, prompts);
        // The new node's recovery was the hand-over: exact snapshots with their history, reported as such.
        Await.until(
                "the hand-over reported as the new node's recovery",
                ClusterFixture.WAIT,
                () -> "shard hand-over"
                        .equals(new JsonObject(fixture.http(third.httpPort())
                                        .get("/overview")
                                        .body())
                                .getJsonObject("cluster")
                                .getJsonObject("recovery")
                                .getString("peer")));
        JsonObject recovery = new JsonObject(
                        fixture.http(third.httpPort()).get("/overview").body())
                .getJsonObject("cluster")
                .getJsonObject("recovery");
        assertTrue(recovery.getBoolean("exact"), recovery.encode());
        assertTrue(recovery.getInteger("partitions") >= 1, recovery.encode());
        assertEquals(1, MetricsPage.of(fixture.http(third.httpPort())).value("kvindexer_recovery_exact"));
        assertEquals(
                null,
                new JsonObject(fixture.http(nodes.get(0).httpPort())
                                .get("/overview")
                                .body())
                        .getJsonObject("cluster")
                        .getJsonObject("recovery")
                        .getString("peer"),
                "the first node recovered from no one");
    }

    @Test
    void withOneReplicaALostShardIsNamedMissingNotAnsweredAsAMiss() throws Exception {
        List<IndexerNode> nodes = start(3, 1);
        List<int[]> prompts = new ArrayList<>();
        feed(nodes, 1, prompts);
        awaitExactAnswers(nodes, prompts);

        // Hazelcast places the six shards at random: stop the node holding most, so some are surely lost.
        IndexerNode gone = nodes.stream()
                .max(java.util.Comparator.comparingInt(n -> heldHere(n).size()))
                .orElseThrow();
        int lost = heldHere(gone).size();
        assertTrue(lost > 0, "the node stopped holds some instances");
        cluster.stop(gone);
        IndexerNode asked = nodes.stream().filter(n -> n != gone).findFirst().orElseThrow();
        Await.until(
                "the answer names the lost instances",
                ClusterFixture.WAIT,
                () -> query(asked, prompts.get(0))
                        .headers()
                        .firstValue("x-kvindexer-missing-instances")
                        .map(v -> v.equals(Integer.toString(lost)))
                        .orElse(false));
        MetricsPage metrics = MetricsPage.of(fixture.http(asked.httpPort()));
        assertTrue(metrics.value("kvindexer_shard_missing_instances_total") >= lost);
        // Meanwhile the survivors rebuild the lost shards from the engines, one by one: an answer names no more
        // missing than were lost, and fewer (or none) as they come back.
        int stillMissing = query(asked, prompts.get(0))
                .headers()
                .firstValue("x-kvindexer-missing-instances")
                .map(Integer::parseInt)
                .orElse(0);
        assertTrue(stillMissing <= lost, stillMissing + " named missing, " + lost + " lost");
    }
}
