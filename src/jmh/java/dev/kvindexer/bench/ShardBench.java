package dev.kvindexer.bench;

import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.wire.LiveFrames;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * What each node of a sharded cluster holds and ingests as nodes are added, and what a scattered query costs against a
 * local one. Every configuration runs real nodes in this JVM on loopback: {@code engines} publishers (raw ZMQ, the
 * vLLM batch format) each store {@code chains} distinct 128-block chains; then the first node answers {@code queries}
 * /query requests of 64-block prompts, one at a time, alternating with a standalone node fed the same engines (the
 * answers must be equal). Configurations: 2 and 3 nodes with R = 1 and 2, then one node, or those of
 * {@code -Dkvindexer.bench.configs=2x1,3x2}. With {@code -Dkvindexer.bench.token=T} each configuration runs twice,
 * without and with the auth token (whose bus speaks TLS and whose shard messages are sealed).
 *
 * <pre>java -Xmx6g -cp target/benchmarks.jar dev.kvindexer.bench.ShardBench [engines] [chains] [queries]</pre>
 */
public final class ShardBench {
    private static final int BLOCK_SIZE = 16;
    private static final int CHAIN = 128;
    private static final int PROMPT_BLOCKS = 64;
    private static final Pattern MEMORY = Pattern.compile("(?m)^kvindexer_index_memory_used_bytes (\\S+)$");
    private static final String TOKEN = System.getProperty("kvindexer.bench.token");

    private ShardBench() {}

    public static void main(String[] args) throws Exception {
        int engines = args.length > 0 ? Integer.parseInt(args[0]) : 12;
        int chains = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        int queries = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        Workload w = Workload.of(engines, chains, queries);
        System.out.printf(
                "%d engines x %d chains x %d blocks = %,d blocks; %d queries of %d blocks%n",
                engines, chains, CHAIN, (long) engines * chains * CHAIN, queries, PROMPT_BLOCKS);
        // A standalone node fed the same engines answers every query locally; it is asked alternately with the
        // cluster, so both latencies come from the same moments of the run.
        IndexerNode local = IndexerNode.start(ServeConfig.local(0));
        try (ZContext ctx = new ZContext()) {
            feed(w, List.of(local), 1, ctx);
            for (int[] c : configs(System.getProperty("kvindexer.bench.configs"))) {
                run(w, c[0], c[1], null, local);
                if (TOKEN != null && c[0] > 1) {
                    run(w, c[0], c[1], TOKEN, local);
                }
            }
        } finally {
            local.close();
        }
    }

    /** {@code 2x1,3x2} as {nodes, R} pairs ({@code full} for R is every node); null for the standard set. */
    private static List<int[]> configs(String spec) {
        if (spec == null) {
            return List.of(new int[] {2, 1}, new int[] {2, 2}, new int[] {3, 1}, new int[] {3, 2}, new int[] {
                1, ClusterConfig.FULL
            });
        }
        List<int[]> out = new ArrayList<>();
        for (String c : spec.split(",")) {
            String[] nr = c.trim().split("x");
            out.add(new int[] {Integer.parseInt(nr[0]), ClusterConfig.parseReplicationFactor(nr[1])});
        }
        return out;
    }

    /** The batches each engine publishes and the prompts of the queries (prefixes of stored chains). */
    private record Workload(int engines, byte[][][] batches, List<int[]> prompts) {
        static Workload of(int engines, int chains, int queries) {
            SplittableRandom rnd = new SplittableRandom(17);
            byte[][][] batches = new byte[engines][chains][];
            List<int[]> prompts = new ArrayList<>();
            int every = Math.max(1, engines * chains / queries);
            for (int e = 0; e < engines; e++) {
                for (int c = 0; c < chains; c++) {
                    int[] tokens = rnd.ints(BLOCK_SIZE * CHAIN, 0, 32_000).toArray();
                    batches[e][c] = BatchEncoder.batch(
                            BatchEncoder.Format.VLLM_MAP,
                            c,
                            List.of(new EngineEvent.Store(
                                    rnd.longs(CHAIN).toArray(), null, tokens, BLOCK_SIZE, "GPU", null)),
                            0);
                    if ((e * chains + c) % every == 0 && prompts.size() < queries) {
                        prompts.add(Arrays.copyOf(tokens, BLOCK_SIZE * PROMPT_BLOCKS));
                    }
                }
            }
            return new Workload(engines, batches, prompts);
        }
    }

    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static void run(Workload w, int nodeCount, int replicationFactor, String token, IndexerNode local)
            throws Exception {
        String name = "kvindexer-bench-" + UUID.randomUUID();
        List<IndexerNode> nodes = new ArrayList<>();
        try (ZContext ctx = new ZContext()) {
            for (int i = 0; i < nodeCount; i++) {
                ServeConfig config = ServeConfig.local(0);
                if (nodeCount > 1) {
                    config = config.withCluster(ClusterConfig.loopback(name).withReplicationFactor(replicationFactor))
                            .withSecurity(new SecurityConfig(token, false, null, null));
                }
                nodes.add(IndexerNode.start(config));
            }
            while (!nodes.stream()
                    .allMatch(n -> n.hazelcast() == null
                            || n.hazelcast().getPartitionService().isClusterSafe())) {
                Thread.sleep(50);
            }
            int holders = replicationFactor == ClusterConfig.FULL ? nodeCount : Math.min(replicationFactor, nodeCount);
            double ingestSeconds = feed(w, nodes, holders, ctx);
            long total = (long) w.engines() * w.batches()[0].length * CHAIN;
            StringBuilder perNode = new StringBuilder();
            for (IndexerNode n : nodes) {
                long stored = n.counters().appliedCount("stored", "ok") * CHAIN;
                Matcher m = MEMORY.matcher(get(n, "/metrics"));
                double memory = m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
                perNode.append(String.format(
                        " [%,d blocks ingested (%.0f %% of all), index %.1f MB]",
                        stored, 100.0 * stored / total, memory / 1e6));
            }
            long[] cluster = new long[w.prompts().size()];
            long[] alone = new long[w.prompts().size()];
            for (int round = 0; round < 2; round++) { // the first round warms up
                for (int q = 0; q < cluster.length; q++) {
                    String body = "{\"model_name\":\"m\",\"token_ids\":"
                            + Arrays.toString(w.prompts().get(q)) + "}";
                    long t0 = System.nanoTime();
                    String a = post(nodes.get(0), "/query", body, 200);
                    cluster[q] = System.nanoTime() - t0;
                    t0 = System.nanoTime();
                    String b = post(local, "/query", body, 200);
                    alone[q] = System.nanoTime() - t0;
                    if (!a.equals(b)) {
                        throw new IllegalStateException("the cluster answers " + a + " where one node answers " + b);
                    }
                }
            }
            Arrays.sort(cluster);
            Arrays.sort(alone);
            System.out.printf(
                    "%d node(s), R=%s%s: ingest %.1f s;%s%n  /query p50/p99: cluster node 1 %.2f / %.2f ms, "
                            + "standalone node %.2f / %.2f ms (answers equal)%n",
                    nodeCount,
                    replicationFactor == ClusterConfig.FULL ? "full" : replicationFactor,
                    token == null ? "" : ", auth token (bus TLS)",
                    ingestSeconds,
                    perNode,
                    cluster[cluster.length / 2] / 1e6,
                    cluster[cluster.length * 99 / 100] / 1e6,
                    alone[alone.length / 2] / 1e6,
                    alone[alone.length * 99 / 100] / 1e6);
        } finally {
            nodes.forEach(IndexerNode::close);
        }
    }

    /** Registers the engines on the first node, waits for their subscribers, publishes everything; seconds taken. */
    private static double feed(Workload w, List<IndexerNode> nodes, int holders, ZContext ctx) throws Exception {
        int chains = w.batches()[0].length;
        ZMQ.Socket[] pubs = new ZMQ.Socket[w.engines()];
        long before = nodes.stream()
                .mapToLong(n -> n.counters().appliedCount("stored", "ok"))
                .sum();
        for (int e = 0; e < w.engines(); e++) {
            pubs[e] = ctx.createSocket(SocketType.XPUB);
            pubs[e].setSndHWM(chains + 10);
            pubs[e].setLinger(0);
            pubs[e].setXpubVerbose(true); // one subscription message per subscriber, not per topic
            pubs[e].bind("tcp://127.0.0.1:0");
            post(
                    nodes.get(0),
                    "/register",
                    "{\"instance_id\":" + (e + 1) + ",\"endpoint\":\"" + pubs[e].getLastEndpoint()
                            + "\",\"model_name\":\"m\",\"block_size\":" + BLOCK_SIZE + "}",
                    201);
            pubs[e].setReceiveTimeOut(20_000);
            for (int s = 0; s < holders; s++) {
                if (pubs[e].recv(0) == null) {
                    throw new IllegalStateException(
                            "engine " + (e + 1) + " has " + s + " of " + holders + " subscribers");
                }
            }
        }
        long start = System.nanoTime();
        for (int c = 0; c < chains; c++) {
            for (int e = 0; e < w.engines(); e++) {
                pubs[e].sendMore(new byte[0]);
                pubs[e].sendMore(LiveFrames.seqFrame(c));
                pubs[e].send(w.batches()[e][c]);
            }
        }
        long expected = before + (long) w.engines() * chains * holders;
        while (nodes.stream()
                        .mapToLong(n -> n.counters().appliedCount("stored", "ok"))
                        .sum()
                < expected) {
            Thread.sleep(5);
        }
        return (System.nanoTime() - start) / 1e9;
    }

    private static String post(IndexerNode node, String path, String body, int status) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (TOKEN != null) {
            request.header("Authorization", "Bearer " + TOKEN);
        }
        HttpResponse<String> r = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != status) {
            throw new IllegalStateException(path + ": " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static String get(IndexerNode node, String path) throws Exception {
        return HTTP.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }
}
