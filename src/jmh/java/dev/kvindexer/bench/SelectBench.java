package dev.kvindexer.bench;

import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.config.ClusterConfig;
import dev.kvindexer.config.HttpConfig;
import dev.kvindexer.config.SelectServiceConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.hash.BlockHasher;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.select.SelectionConfig;
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
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * What a selection costs against a plain overlap query on the same node, and what cluster-wide reservations cost.
 *
 * <p>Part 1, for 64 and 1,024 ranks: one node runs the selection service (KV events off, so its index is empty and
 * the figure is the selection's own work: hashing an 8k-token prompt, a load row and a cost per rank) with
 * {@code active} reservations booked across the ranks. {@code /select}, the same with {@code "advisory": true} (the
 * rank's load added to the answer) and the indexer's {@code /query} of the same prompts are timed alternately, one
 * request at a time, then {@code /select} and {@code /query} each alone from 4 client threads for 5 s.
 *
 * <p>Part 2: two clustered replicas; {@code /select_and_reserve} on one is timed against the same on a standalone
 * service, and after every acknowledged booking the other replica's {@code /loads} is read once to check it is
 * already counted there.
 *
 * <p>Part 3 ({@code features}): a selection feature on against off, KV events on, each service on its own node: 8
 * workers whose publishers never send, 64 prompts of 8k tokens sharing prefixes. {@code /select} and
 * {@code /select_and_reserve} go to both services in turn, one request at a time; each booking is freed again, so
 * the load stays flat.
 *
 * <pre>java -Xmx4g -cp target/benchmarks.jar dev.kvindexer.bench.SelectBench [requests] [active]
 * java -Xmx4g -cp target/benchmarks.jar dev.kvindexer.bench.SelectBench features [requests]</pre>
 */
public final class SelectBench {
    private static final int TOKENS = 8192;
    private static final int BLOCK_SIZE = 16;
    private static final Map<String, String> ENV = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    private SelectBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("features")) {
            int requests = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
            featureOnAgainstOff(
                    "predicted entries", Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "5"), c -> c, false, requests);
            featureOnAgainstOff("session affinity", Map.of(), c -> c.withSessionAffinityTtlSecs(600), true, requests);
            kvHintsOnAgainstOff(requests);
            return;
        }
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int active = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        for (int[] shape : new int[][] {{8, 8}, {64, 16}}) {
            selectAgainstQuery(shape[0], shape[1], requests, active);
        }
        clusterBookings(requests);
    }

    private static String prompt(SplittableRandom rnd) {
        StringBuilder sb = new StringBuilder("[");
        int shared = rnd.nextInt(4) * 2048; // prompts share system-prompt prefixes of 0 to 6k tokens
        for (int i = 0; i < TOKENS; i++) {
            sb.append(i == 0 ? "" : ",").append(i < shared ? i : rnd.nextInt(50_000));
        }
        return sb.append(']').toString();
    }

    private static void selectAgainstQuery(int workers, int ranksEach, int requests, int active) throws Exception {
        IndexerNode node = IndexerNode.start(ServeConfig.local(0));
        try {
            int port = SelectServiceCommand.deploy(
                            node, SelectServiceConfig.on("127.0.0.1", 0), SelectionConfig.fromEnvironment(ENV))
                    .actualPort();
            String select = "http://127.0.0.1:" + port;
            String indexer = "http://127.0.0.1:" + node.httpPort();
            for (int w = 1; w <= workers; w++) {
                post(
                        select + "/workers",
                        "{\"worker_id\":" + w + ",\"model_name\":\"m\",\"endpoint\":\"http://w" + w
                                + "\",\"block_size\":" + BLOCK_SIZE + ",\"data_parallel_size\":" + ranksEach + "}");
            }
            SplittableRandom rnd = new SplittableRandom(7);
            List<String> prompts = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                prompts.add(prompt(rnd));
            }
            for (int i = 0; i < active; i++) {
                post(
                        select + "/select_and_reserve",
                        "{\"model_name\":\"m\",\"token_ids\":" + prompts.get(i % 64) + "}");
            }
            long[] s = new long[requests];
            long[] a = new long[requests];
            long[] q = new long[requests];
            for (int i = 0; i < 200; i++) { // warm-up
                post(select + "/select", body(prompts.get(i % 64)));
                post(indexer + "/query", body(prompts.get(i % 64)));
            }
            for (int i = 0; i < requests; i++) {
                String b = body(prompts.get(i % 64));
                String advisory = b.substring(0, b.length() - 1) + ",\"advisory\":true}";
                long t0 = System.nanoTime();
                post(select + "/select", b);
                long t1 = System.nanoTime();
                post(select + "/select", advisory);
                long t2 = System.nanoTime();
                post(indexer + "/query", b);
                long t3 = System.nanoTime();
                s[i] = t1 - t0;
                a[i] = t2 - t1;
                q[i] = t3 - t2;
            }
            System.out.printf(
                    "%d ranks, %d active reservations, %d-token prompts: /select %s; advisory /select %s; /query %s%n",
                    workers * ranksEach, active, TOKENS, tail(s), tail(a), tail(q));
            System.out.printf(
                    "  throughput, 4 clients, 5 s each: /select %.0f/s, /query %.0f/s%n",
                    throughput(select + "/select", prompts), throughput(indexer + "/query", prompts));
        } finally {
            node.close();
        }
    }

    private static String body(String tokens) {
        return "{\"model_name\":\"m\",\"token_ids\":" + tokens + "}";
    }

    private static double throughput(String url, List<String> prompts) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong done = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int offset = t;
            Thread th = new Thread(() -> {
                for (int i = offset; !stop.get(); i += 4) {
                    post(url, body(prompts.get(i % prompts.size())));
                    done.incrementAndGet();
                }
            });
            th.start();
            threads.add(th);
        }
        Thread.sleep(5000);
        stop.set(true);
        for (Thread th : threads) {
            th.join();
        }
        return done.get() / 5.0;
    }

    /**
     * One feature, turned on by router environment {@code env} and {@code onConfig}, against the same service without
     * it; with {@code sessions} every request names one of 64 sessions (one per prompt), to both services alike.
     */
    private static void featureOnAgainstOff(
            String feature,
            Map<String, String> env,
            java.util.function.UnaryOperator<SelectServiceConfig> onConfig,
            boolean sessions,
            int requests)
            throws Exception {
        IndexerNode offNode = IndexerNode.start(ServeConfig.local(0));
        IndexerNode onNode = IndexerNode.start(ServeConfig.local(0));
        try {
            SelectServiceConfig config = SelectServiceConfig.on("127.0.0.1", 0);
            String off = "http://127.0.0.1:"
                    + SelectServiceCommand.deploy(offNode, config, SelectionConfig.fromEnvironment(Map.of()))
                            .actualPort();
            String on = "http://127.0.0.1:"
                    + SelectServiceCommand.deploy(onNode, onConfig.apply(config), SelectionConfig.fromEnvironment(env))
                            .actualPort();
            for (String u : List.of(off, on)) {
                for (int w = 1; w <= 8; w++) {
                    // A publisher nobody binds: the listener waits for it, and the index holds no engine blocks.
                    post(
                            u + "/workers",
                            "{\"worker_id\":" + w + ",\"model_name\":\"m\",\"endpoint\":\"http://w" + w
                                    + "\",\"block_size\":" + BLOCK_SIZE + ",\"kv_events_endpoint\":\"tcp://127.0.0.1:"
                                    + (1 + w) + "\"}");
                }
            }
            SplittableRandom rnd = new SplittableRandom(7);
            List<String> prompts = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                prompts.add(prompt(rnd));
            }
            long[][] t = new long[4][requests];
            for (int i = -200; i < requests; i++) { // the first 200 warm up
                String b = body(prompts.get(Math.floorMod(i, 64)));
                if (sessions) {
                    b = b.substring(0, b.length() - 1) + ",\"session_id\":\"session-" + Math.floorMod(i, 64) + "\"}";
                }
                String booked = b.substring(0, b.length() - 1) + ",\"selection_id\":\"f" + i + "\"}";
                long t0 = System.nanoTime();
                post(off + "/select", b);
                long t1 = System.nanoTime();
                post(on + "/select", b);
                long t2 = System.nanoTime();
                post(off + "/select_and_reserve", booked);
                long t3 = System.nanoTime();
                post(on + "/select_and_reserve", booked);
                long t4 = System.nanoTime();
                delete(off + "/reservations/f" + i);
                delete(on + "/reservations/f" + i);
                if (i >= 0) {
                    t[0][i] = t1 - t0;
                    t[1][i] = t2 - t1;
                    t[2][i] = t3 - t2;
                    t[3][i] = t4 - t3;
                }
            }
            System.out.printf(
                    "%s: /select off %s, on %s; /select_and_reserve off %s, on %s%n",
                    feature, tail(t[0]), tail(t[1]), tail(t[2]), tail(t[3]));
            if (!sessions) {
                System.out.printf(
                        "  bursts of 4 siblings (6k shared tokens, each prefilled before the next, no events), workers a"
                                + " burst lands on, mean of 16: off %.2f, on %.2f%n",
                        burstSpread(off, rnd), burstSpread(on, rnd));
            }
        } finally {
            onNode.close();
            offNode.close();
        }
    }

    /**
     * KV hints: worker 1's engine publishes the 64 prompts' blocks; every booking is pinned to one of the 7 others,
     * which hold nothing, so on the service whose workers register hint members every booking carries a hint (its
     * source's engine hashes, asked of the index once more) and on the other none does.
     */
    private static void kvHintsOnAgainstOff(int requests) throws Exception {
        IndexerNode offNode = IndexerNode.start(ServeConfig.local(0));
        IndexerNode onNode = IndexerNode.start(ServeConfig.local(0));
        try (ZContext ctx = new ZContext()) {
            SelectServiceConfig config = SelectServiceConfig.on("127.0.0.1", 0);
            SplittableRandom rnd = new SplittableRandom(7);
            List<int[]> prompts = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                int shared = rnd.nextInt(4) * 2048;
                int[] t = new int[TOKENS];
                for (int j = 0; j < TOKENS; j++) {
                    t[j] = j < shared ? j : rnd.nextInt(50_000);
                }
                prompts.add(t);
            }
            String[] urls = new String[2];
            for (int s = 0; s < 2; s++) {
                IndexerNode node = s == 0 ? offNode : onNode;
                String url = "http://127.0.0.1:"
                        + SelectServiceCommand.deploy(node, config, SelectionConfig.fromEnvironment(Map.of()))
                                .actualPort();
                urls[s] = url;
                ZMQ.Socket pub = ctx.createSocket(SocketType.XPUB);
                pub.setSndHWM(0);
                pub.setReceiveTimeOut(30_000);
                pub.bind("tcp://127.0.0.1:0");
                for (int w = 1; w <= 8; w++) {
                    String hints = s == 0
                            ? ""
                            : ",\"router_hint_worker_type\":\"decode\",\"router_hint_source_control_endpoints\":"
                                    + "{\"0\":\"tcp://w" + w + ":7000\"}";
                    String events = w == 1 ? pub.getLastEndpoint() : "tcp://127.0.0.1:" + (1 + w);
                    post(
                            url + "/workers",
                            "{\"worker_id\":" + w + ",\"model_name\":\"m\",\"endpoint\":\"http://w" + w
                                    + "\",\"block_size\":" + BLOCK_SIZE + ",\"kv_events_endpoint\":\"" + events
                                    + "\"" + hints + "}");
                }
                if (pub.recv(0) == null) {
                    throw new IllegalStateException("worker 1's publisher was not subscribed to");
                }
                long seq = 0;
                for (int[] t : prompts) {
                    long[] engine =
                            BlockHasher.sequenceHashes(BlockHasher.localHashes(t, BLOCK_SIZE, BlockHasher.BASE_SEED));
                    List<EngineEvent> stored = List.of(new EngineEvent.Store(engine, null, t, BLOCK_SIZE, "GPU", null));
                    pub.sendMore(new byte[0]);
                    pub.sendMore(LiveFrames.seqFrame(seq));
                    pub.send(BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, seq++, stored, 0));
                }
                String last = "{\"model_name\":\"m\",\"token_ids\":"
                        + Arrays.toString(prompts.get(63)).replace(" ", "") + "}";
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!post(url + "/overlap_scores", last).contains("\"device_blocks\":" + TOKENS / BLOCK_SIZE)) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("worker 1's blocks did not reach the index");
                    }
                    Thread.sleep(10);
                }
            }
            long[][] t = new long[4][requests];
            int hinted = 0;
            for (int i = -200; i < requests; i++) {
                String tokens =
                        Arrays.toString(prompts.get(Math.floorMod(i, 64))).replace(" ", "");
                String pinned = ",\"pinned_worker\":{\"worker_id\":" + (2 + Math.floorMod(i, 7)) + ",\"dp_rank\":0}";
                String b = "{\"model_name\":\"m\",\"token_ids\":" + tokens + pinned + "}";
                String booked =
                        "{\"model_name\":\"m\",\"selection_id\":\"h" + i + "\",\"token_ids\":" + tokens + pinned + "}";
                long t0 = System.nanoTime();
                post(urls[0] + "/select", b);
                long t1 = System.nanoTime();
                post(urls[1] + "/select", b);
                long t2 = System.nanoTime();
                post(urls[0] + "/select_and_reserve", booked);
                long t3 = System.nanoTime();
                String answer = post(urls[1] + "/select_and_reserve", booked);
                long t4 = System.nanoTime();
                delete(urls[0] + "/reservations/h" + i);
                delete(urls[1] + "/reservations/h" + i);
                if (i >= 0) {
                    t[0][i] = t1 - t0;
                    t[1][i] = t2 - t1;
                    t[2][i] = t3 - t2;
                    t[3][i] = t4 - t3;
                    hinted += answer.contains("\"kv_hint\"") ? 1 : 0;
                }
            }
            System.out.printf(
                    "kv hints (%d of %d bookings carried one): /select off %s, on %s; /select_and_reserve off %s, on %s%n",
                    hinted, requests, tail(t[0]), tail(t[1]), tail(t[2]), tail(t[3]));
        } finally {
            onNode.close();
            offNode.close();
        }
    }

    /**
     * Books 16 bursts of 4 sibling prompts (a shared 6k-token prefix, distinct tails) one after the other, each
     * sibling's prefill reported complete before the next arrives and no engine event in between (an engine that
     * publishes its KV events late), and answers on how many workers a burst lands on average: 1 is every sibling
     * where its prefix already went.
     */
    private static double burstSpread(String url, SplittableRandom rnd) {
        int workers = 0;
        for (int burst = 0; burst < 16; burst++) {
            java.util.Set<String> landed = new java.util.HashSet<>();
            int base = 1_000_000 + burst * 10_000;
            for (int sibling = 0; sibling < 4; sibling++) {
                StringBuilder tokens = new StringBuilder("[");
                for (int i = 0; i < TOKENS; i++) {
                    tokens.append(i == 0 ? "" : ",").append(i < 6144 ? base + i : rnd.nextInt(50_000));
                }
                String answer = post(
                        url + "/select_and_reserve",
                        "{\"model_name\":\"m\",\"selection_id\":\"burst-" + burst + "-" + sibling + "\",\"token_ids\":"
                                + tokens.append(']') + "}");
                int at = answer.indexOf("\"worker_id\":") + "\"worker_id\":".length();
                landed.add(answer.substring(at, answer.indexOf(',', at)));
                post(url + "/reservations/burst-" + burst + "-" + sibling + "/prefill_complete", "");
            }
            workers += landed.size();
            for (int sibling = 0; sibling < 4; sibling++) {
                delete(url + "/reservations/burst-" + burst + "-" + sibling);
            }
        }
        return workers / 16.0;
    }

    private static void clusterBookings(int requests) throws Exception {
        String name = "select-bench-" + UUID.randomUUID();
        ServeConfig clustered = ServeConfig.local(0).withCluster(ClusterConfig.loopback(name));
        IndexerNode a = IndexerNode.start(clustered);
        IndexerNode b = IndexerNode.start(clustered);
        IndexerNode alone = IndexerNode.start(ServeConfig.local(0));
        try {
            SelectServiceConfig config = new SelectServiceConfig(
                    "127.0.0.1", 0, 120_000, 4096, 268_435_456L, 10_000, 0, List.of(), HttpConfig.DEFAULT);
            String urlA = "http://127.0.0.1:"
                    + SelectServiceCommand.deploy(a, config, SelectionConfig.fromEnvironment(ENV))
                            .actualPort();
            String urlB = "http://127.0.0.1:"
                    + SelectServiceCommand.deploy(b, config, SelectionConfig.fromEnvironment(ENV))
                            .actualPort();
            String urlAlone = "http://127.0.0.1:"
                    + SelectServiceCommand.deploy(alone, config, SelectionConfig.fromEnvironment(ENV))
                            .actualPort();
            for (String u : List.of(urlA, urlB, urlAlone)) {
                for (int w = 1; w <= 8; w++) {
                    post(
                            u + "/workers",
                            "{\"worker_id\":" + w + ",\"model_name\":\"m\",\"endpoint\":\"http://w" + w
                                    + "\",\"block_size\":16}");
                }
            }
            long[] shared = new long[requests];
            long[] local = new long[requests];
            int visible = 0;
            for (int i = 0; i < requests; i++) {
                String body = "{\"model_name\":\"m\",\"token_ids\":[" + i + ",1,2,3,4,5,6,7,8,9,10,11,12,13,14,15],"
                        + "\"selection_id\":\"b" + i + "\"}";
                long t0 = System.nanoTime();
                post(urlA + "/select_and_reserve", body);
                long t1 = System.nanoTime();
                post(urlAlone + "/select_and_reserve", body);
                long t2 = System.nanoTime();
                shared[i] = t1 - t0;
                local[i] = t2 - t1;
                if (get(urlB + "/loads").contains("\"active_requests\":")
                        && countActive(get(urlB + "/loads")) == i + 1) {
                    visible++;
                }
            }
            System.out.printf(
                    "bookings: clustered (2 replicas) %s; standalone %s;"
                            + " counted on the other replica right after the answer: %d of %d%n",
                    tail(shared), tail(local), visible, requests);
        } finally {
            alone.close();
            b.close();
            a.close();
        }
    }

    private static int countActive(String loads) {
        int n = 0;
        for (int i = loads.indexOf("\"active_requests\":"); i >= 0; i = loads.indexOf("\"active_requests\":", i + 1)) {
            int start = i + "\"active_requests\":".length();
            int end = start;
            while (Character.isDigit(loads.charAt(end))) {
                end++;
            }
            n += Integer.parseInt(loads.substring(start, end));
        }
        return n;
    }

    /** p50, p99 and p99.9 in ms. */
    private static String tail(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return String.format(
                "p50 %.2f ms p99 %.2f ms p99.9 %.2f ms", pct(sorted, 50), pct(sorted, 99), pct(sorted, 99.9));
    }

    private static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)] / 1e6;
    }

    private static String post(String url, String body) {
        try {
            HttpResponse<String> r = CLIENT.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() >= 300) {
                throw new IllegalStateException(url + " answered " + r.statusCode() + ": " + r.body());
            }
            return r.body();
        } catch (java.io.IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void delete(String url) {
        try {
            HttpResponse<String> r = CLIENT.send(
                    HttpRequest.newBuilder(URI.create(url)).DELETE().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() >= 300) {
                throw new IllegalStateException(url + " answered " + r.statusCode() + ": " + r.body());
            }
        } catch (java.io.IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String get(String url) {
        try {
            return CLIENT.send(
                            HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString())
                    .body();
        } catch (java.io.IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
