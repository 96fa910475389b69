package dev.kvindexer.cli;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.LoopbackEngines;
import dev.kvindexer.sim.LoopbackHttp;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code --warm-up}: before the node starts, a private node on a loopback port is fed and queried through the same
 * HTTP, ZMQ, decoding, hashing and walking code for a while, then closed, so the JIT compiler has compiled those paths
 * before the first real query instead of during a restarted node's first minute. Nothing of it is left behind: its
 * index, registrations, ports and meters go with it.
 */
final class StartupWarmUp {
    private static final String MODEL = "warm-up";
    /** Dynamo's registrations and queries are a partition of their own, beside the Conductor's contexts. */
    private static final String DYNAMO_MODEL = "warm-up-dynamo";

    private static final String MSGPACK = "application/msgpack";
    private static final String JSON = "application/json";
    /** The headers real clients add to a request: Python's requests, Rust's reqwest (lower-case names), curl. */
    private static final String[] PYTHON = {
        "User-Agent: python-requests/2.32.3", "Accept-Encoding: gzip, deflate", "Accept: */*", "Connection: keep-alive"
    };

    private static final String[] RUST = {"accept: */*", "user-agent: router/1.0"};
    private static final String[] CURL = {"User-Agent: curl/8.5.0", "Accept: */*"};
    private static final int ENGINES = 8;
    /**
     * Dynamo's engines are fewer and take none of the churn: its ingest and query code is compiled on top of the
     * Conductor's, and every method more is compiler time the queries do not get on a small node.
     */
    private static final int DYNAMO_ENGINES = 4;
    /** Prompts each engine holds besides its share of the queried one, so the index is not a toy's. */
    private static final int HELD_PROMPTS = 16;

    private static final int TOKENS = 8192;
    private static final int PREFIX_BLOCKS = 64;
    private static final int VOCABULARY = 32_000;
    /** Prompts the Conductor's engines store and remove again, so the ingest path runs without the index growing. */
    private static final int CHURN_PROMPTS = 4;
    /** A pause between two churn rounds, which leaves most of the time to the queries. */
    private static final long CHURN_PAUSE_MS = 20;
    /**
     * Query callers per event loop. The code a request runs once reaches the compiler's last tier only after many
     * thousands of requests; short prompts bring those, long ones the hashing and walking loops.
     */
    private static final int CALLERS_PER_LOOP = 2;
    /**
     * How long a registration's subscription and the fill's blocks may take to show: on a busy host longer than a
     * short budget, which the warm-up then overruns rather than fail.
     */
    private static final Duration FILL_WAIT = Duration.ofSeconds(30);
    /** Requests a caller sends on one connection: connections open and close as they do in service. */
    private static final int REQUESTS_PER_CONNECTION = 500;
    /**
     * Short requests to each long one. A long prompt costs as much as many short ones on code not yet compiled, and
     * the per-request code needs the short ones' numbers before it reaches the compiler's last tier.
     */
    private static final int SHORT_PER_LONG = 32;

    /** What the warm-up did, and the loopback port its node served on. */
    record Report(long queries, long blocks, Duration took, int port) {}

    private StartupWarmUp() {}

    /** Runs the warm-up for about {@code budget} on {@code threads} event loops. Blocking. */
    static Report run(int threads, Duration budget) throws Exception {
        long t0 = System.nanoTime();
        // Closing a node sends its event loops down paths the compiled code had never seen, which undoes some of
        // it; a second node after the first has those compiled again before the real node starts.
        Report first = runNode(threads, t0 + budget.toNanos() * 3 / 5);
        Report second = runNode(threads, t0 + budget.toNanos());
        // The warm-up grew the heap with garbage: a full collection now lets the collector give it back to the
        // system before the node holds anything, instead of keeping it committed (and resident) for good.
        System.gc();
        return new Report(
                first.queries() + second.queries(),
                first.blocks() + second.blocks(),
                Duration.ofNanos(System.nanoTime() - t0),
                second.port());
    }

    /** One private node, fed and queried until {@code deadline}, then closed. */
    private static Report runNode(int threads, long deadline) throws Exception {
        long t0 = System.nanoTime();
        ServeConfig config = new ServeConfig(
                        "127.0.0.1", 0, threads, 1, List.of(), null, MODEL, "default", List.of(), false, 0)
                // the process's OTEL_* settings are the real node's: no span of this traffic is exported
                .withTracing(Map.of("otel.sdk.disabled", "true"));
        IndexerNode node = IndexerNode.start(config);
        LoopbackEngines conductor = new LoopbackEngines("http://127.0.0.1:" + node.httpPort(), MODEL);
        LoopbackEngines dynamo = new LoopbackEngines("http://127.0.0.1:" + node.httpPort(), DYNAMO_MODEL);
        try {
            SplittableRandom rnd = new SplittableRandom(11);
            int[] prompt = rnd.ints(TOKENS, 0, VOCABULARY).toArray();
            long blocks = fill(conductor, dynamo, prompt, rnd, FILL_WAIT);
            List<byte[]> requests = requests(conductor, dynamo, prompt, rnd);
            AtomicLong queries = new AtomicLong();
            AtomicReference<Exception> failed = new AtomicReference<>();
            List<Thread> callers = new ArrayList<>();
            for (int c = 0; c < threads * CALLERS_PER_LOOP; c++) {
                int first = c;
                Thread caller = new Thread(
                        () -> query(node.httpPort(), requests, first, deadline, queries, failed), "warm-up-query-" + c);
                caller.start();
                callers.add(caller);
            }
            int[][] churn = new int[CHURN_PROMPTS][];
            for (int p = 0; p < CHURN_PROMPTS; p++) {
                churn[p] = rnd.ints(TOKENS, 0, VOCABULARY).toArray();
            }
            for (int round = 0; System.nanoTime() < deadline && failed.get() == null; round++) {
                int[] p = churn[round % CHURN_PROMPTS];
                int e = round % ENGINES;
                blocks += conductor.store(e, p);
                blocks += conductor.remove(e, p);
                Thread.sleep(CHURN_PAUSE_MS);
            }
            for (Thread caller : callers) {
                caller.join();
            }
            if (failed.get() != null) {
                throw failed.get();
            }
            return new Report(queries.get(), blocks, Duration.ofNanos(System.nanoTime() - t0), node.httpPort());
        } finally {
            // the node first: its listeners stop before their publishers go, so none of them reports a lost one
            node.close();
            conductor.close();
            dynamo.close();
        }
    }

    /**
     * Registers the engines and stores what they hold: each Conductor engine a share of {@code prompt} and prompts
     * of its own, each Dynamo engine a share; returns once the Conductor's {@code /query} sees every share.
     */
    private static long fill(
            LoopbackEngines conductor, LoopbackEngines dynamo, int[] prompt, SplittableRandom rnd, Duration wait)
            throws IOException, InterruptedException {
        long blocks = 0;
        Map<String, Long> expected = new TreeMap<>();
        int tokensHeld = PREFIX_BLOCKS * LoopbackEngines.BLOCK_SIZE;
        for (int e = 0; e < ENGINES; e++) {
            conductor.registerConductor(wait);
            for (int p = 0; p < HELD_PROMPTS; p++) {
                blocks += conductor.store(e, rnd.ints(TOKENS, 0, VOCABULARY).toArray());
            }
            blocks += conductor.store(e, Arrays.copyOf(prompt, (e + 1) * tokensHeld));
            expected.put(LoopbackEngines.instance(e), (long) (e + 1) * tokensHeld);
        }
        for (int e = 0; e < DYNAMO_ENGINES; e++) {
            dynamo.registerDynamo(wait);
            blocks += dynamo.store(e, Arrays.copyOf(prompt, (e + 1) * tokensHeld));
        }
        conductor.awaitMatched(conductor.conductorQuery(prompt), expected, wait);
        return blocks;
    }

    /**
     * The requests the callers cycle through, shaped as a node's real traffic so that what the compiler builds from
     * them holds when that traffic comes: long prompts and short, hits, misses and prompts that share only their first
     * blocks (a common system prompt, then a user's own text), a partial last block; the headers of the clients that
     * send them; a load balancer's probe. Mostly short ones, which bring the per-request code its invocations. The
     * Conductor's msgpack and Dynamo's JSON.
     */
    private static List<byte[]> requests(
            LoopbackEngines conductor, LoopbackEngines dynamo, int[] prompt, SplittableRandom rnd) {
        List<byte[]> requests = new ArrayList<>();
        requests.add(LoopbackHttp.post("/query", MSGPACK, conductor.conductorQuery(prompt)));
        byte[] shortHit = LoopbackHttp.post("/query", MSGPACK, conductor.conductorQuery(Arrays.copyOf(prompt, 128)));
        byte[] shortMiss = LoopbackHttp.post(
                "/query",
                MSGPACK,
                conductor.conductorQuery(rnd.ints(128, 0, VOCABULARY).toArray()));
        byte[] shortShared = LoopbackHttp.request(
                "POST", "/query", MSGPACK, conductor.conductorQuery(sharedThenOwn(prompt, 80, 128, rnd)), PYTHON);
        byte[] dynamoShort =
                LoopbackHttp.request("POST", "/query", JSON, dynamo.dynamoQuery(Arrays.copyOf(prompt, 128)), RUST);
        byte[] probe = LoopbackHttp.request("GET", "/health", null, new byte[0], CURL);
        for (int i = 0; i < SHORT_PER_LONG; i++) {
            requests.add(
                    i % 8 == 7
                            ? shortMiss
                            : i % 8 == 3 ? dynamoShort : i % 8 == 5 ? shortShared : i == 1 ? probe : shortHit);
        }
        requests.add(LoopbackHttp.post("/query", MSGPACK, conductor.conductorQuery(Arrays.copyOf(prompt, 1000))));
        requests.add(LoopbackHttp.post(
                "/query",
                MSGPACK,
                conductor.conductorQuery(rnd.ints(TOKENS, 0, VOCABULARY).toArray())));
        requests.add(LoopbackHttp.request(
                "POST", "/query", MSGPACK, conductor.conductorQuery(sharedThenOwn(prompt, 2500, TOKENS, rnd)), PYTHON));
        requests.add(LoopbackHttp.post("/query", JSON, dynamo.dynamoQuery(prompt)));
        return requests;
    }

    /** The first {@code shared} tokens of {@code prompt}, then tokens of its own up to {@code length}. */
    private static int[] sharedThenOwn(int[] prompt, int shared, int length, SplittableRandom rnd) {
        int[] tokens = Arrays.copyOf(prompt, length);
        for (int i = shared; i < length; i++) {
            tokens[i] = rnd.nextInt(VOCABULARY);
        }
        return tokens;
    }

    /**
     * A caller's loop: the requests in turn from {@code first}, over connections it opens and closes, until the
     * deadline; each of them at least once, however long the fill took, so that every route's failure shows.
     */
    private static void query(
            int port,
            List<byte[]> requests,
            int first,
            long deadline,
            AtomicLong queries,
            AtomicReference<Exception> failed) {
        try {
            int sent = 0;
            for (int i = first; failed.get() == null && (sent < requests.size() || System.nanoTime() < deadline); ) {
                try (LoopbackHttp http = new LoopbackHttp("127.0.0.1", port)) {
                    int last = i + REQUESTS_PER_CONNECTION;
                    for (; i < last && (sent < requests.size() || System.nanoTime() < deadline); i++, sent++) {
                        http.send(requests.get(i % requests.size()));
                        queries.incrementAndGet();
                    }
                }
            }
        } catch (Exception e) {
            failed.compareAndSet(null, e);
        }
    }
}
