package dev.kvindexer.bench;

import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.hash.VllmBlockHasher;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.wire.LiveFrames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Fills a running kvindexer for the msgpack half of the HTTP query benchmark (BENCHMARKS.md, "HTTP query path") and
 * writes the query body wrk sends. A msgpack {@code /query} is the C++ Mooncake Conductor's (docs/api/mooncake-cpp.md),
 * which answers only from contexts of C++-form {@code vLLM} registrations fed over ZMQ, so this does what engines
 * behind the Conductor do: each of 8 engines binds a PUB socket on loopback, registers it with a msgpack
 * {@code /register} carrying a hash profile, and publishes vLLM {@code BlockStored} batches keyed by vLLM's own block
 * hash of that profile. The data is {@code bench/http-fill.py}'s: block size 16, one 8,192-token prompt of which engine
 * e holds the first (e + 1) * 64 blocks, plus {@code prompts} other 8,192-token prompts per engine (200: 821,504
 * blocks). The body is {@code {"model", "block_size", "token_ids"}}, {@code token_ids} a bin of little-endian u32s.
 *
 * <p>The program checks that {@code /query} with that body names every engine with the prefix it holds, then exits;
 * the registrations stay, and so do their blocks (a Conductor registration drops its blocks only when unregistered).
 * {@code --verify-only} sends the written body again and checks the same answer. A second fill unregisters the 8
 * engines first, so it starts from an empty index each time.
 *
 * <pre>java -cp target/benchmarks.jar dev.kvindexer.bench.CppQueryFill http://127.0.0.1:18090 /tmp/query.msgpack
 *     [--prompts 200] [--verify-only]</pre>
 */
public final class CppQueryFill {
    private static final int ENGINES = 8;
    private static final int BLOCK_SIZE = 16;
    private static final int TOKENS = 8192;
    private static final int PREFIX_BLOCKS = 64;
    private static final int VOCABULARY = 32_000;
    /** Blocks per BlockStored event: a prompt goes out as several, each naming the block before it as parent. */
    private static final int EVENT_BLOCKS = 64;

    private static final String MODEL = "m";
    private static final HashProfile PROFILE = new HashProfile(HashProfile.Algorithm.SHA256_CBOR, "0");
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final String base;

    private CppQueryFill(String base) {
        this.base = base.replaceAll("/+$", "");
    }

    public static void main(String[] args) throws Exception {
        List<String> positional = new ArrayList<>();
        boolean verifyOnly = false;
        int prompts = 200;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--verify-only" -> verifyOnly = true;
                case "--prompts" -> prompts = Integer.parseInt(args[++i]);
                default -> positional.add(args[i]);
            }
        }
        if (positional.size() != 2) {
            fail("usage: CppQueryFill <base URL> <body path> [--prompts N] [--verify-only]");
        }
        CppQueryFill fill = new CppQueryFill(positional.get(0));
        Path out = Path.of(positional.get(1));
        if (verifyOnly) {
            if (!Files.isRegularFile(out)) {
                fail(out + " does not exist: run without --verify-only first");
            }
            Map<String, Long> matched = fill.verify(Files.readAllBytes(out), Duration.ZERO);
            System.out.printf("%s: /query answers longest_matched %s%n", out, matched);
            return;
        }
        long t0 = System.nanoTime();
        int[] prompt = new SplittableRandom(7).ints(TOKENS, 0, VOCABULARY).toArray();
        byte[] body = queryBody(prompt);
        long blocks = fill.fill(prompt, prompts);
        // Again now that the publishers are closed: wrk runs after this program, on the blocks left behind.
        Map<String, Long> matched = fill.verify(body, WAIT);
        Files.write(out, body);
        System.out.printf(
                "%d engines, %,d blocks over ZMQ in %.1f s; /query answers longest_matched %s; %,d-byte body in %s%n",
                ENGINES, blocks, (System.nanoTime() - t0) / 1e9, matched, body.length, out);
    }

    /**
     * Registers and feeds the engines; returns the blocks published. The sockets stay open until every engine's
     * prefix shows in {@code /query}: each engine sends it last, so by then everything before it has been applied.
     */
    private long fill(int[] prompt, int prompts) throws Exception {
        for (int e = 0; e < ENGINES; e++) {
            // An earlier fill's registration would conflict with this one's new endpoint.
            String id = instance(e);
            post("/unregister", msgpack(p -> {
                p.packMapHeader(2);
                p.packString("instance_id").packString(id);
                p.packString("dp_rank").packInt(0);
            }));
        }
        VllmBlockHasher hasher = new VllmBlockHasher(PROFILE);
        SplittableRandom rnd = new SplittableRandom(8);
        long blocks = 0;
        try (ZContext ctx = new ZContext()) {
            List<ZMQ.Socket> pubs = new ArrayList<>();
            for (int e = 0; e < ENGINES; e++) {
                pubs.add(register(ctx, e));
            }
            for (int e = 0; e < ENGINES; e++) {
                ZMQ.Socket pub = pubs.get(e);
                long seq = 0;
                for (int p = 0; p < prompts; p++) {
                    blocks += publish(
                            pub, seq++, hasher, rnd.ints(TOKENS, 0, VOCABULARY).toArray());
                }
                blocks += publish(pub, seq, hasher, Arrays.copyOf(prompt, (e + 1) * PREFIX_BLOCKS * BLOCK_SIZE));
            }
            verify(queryBody(prompt), WAIT);
        }
        return blocks;
    }

    /**
     * Binds engine {@code e}'s publisher and registers it the C++ Conductor's way; returns once the indexer has
     * subscribed. An XPUB is a PUB on the wire that also shows the subscription, so nothing is sent into the
     * slow-joiner window.
     */
    private ZMQ.Socket register(ZContext ctx, int e) throws Exception {
        ZMQ.Socket pub = ctx.createSocket(SocketType.XPUB);
        pub.setSndHWM(0); // no limit: nothing published is dropped
        pub.setLinger(0);
        pub.setReceiveTimeOut((int) WAIT.toMillis());
        pub.bind("tcp://127.0.0.1:0");
        HttpResponse<byte[]> r = post("/register", msgpack(p -> {
            p.packMapHeader(7);
            p.packString("endpoint").packString(pub.getLastEndpoint());
            p.packString("type").packString("vLLM");
            p.packString("modelname").packString(MODEL);
            p.packString("instance_id").packString(instance(e));
            p.packString("block_size").packInt(BLOCK_SIZE);
            p.packString("dp_rank").packInt(0);
            p.packString("hash_profile").packMapHeader(4);
            p.packString("strategy").packString(HashProfile.STRATEGY);
            p.packString("algorithm").packString(PROFILE.algorithm().wireName());
            p.packString("python_hash_seed").packString(PROFILE.pythonHashSeed());
            p.packString("index_projection").packString(HashProfile.INDEX_PROJECTION);
        }));
        if (r.statusCode() != 200) {
            fail("POST /register " + instance(e) + ": " + r.statusCode() + " " + json(r.body()));
        }
        byte[] subscription = pub.recv(0);
        if (subscription == null) {
            fail("the indexer did not subscribe to " + pub.getLastEndpoint() + " within " + WAIT.toSeconds() + " s");
        }
        return pub;
    }

    /**
     * One vLLM batch (topic, seq, payload) storing a prompt's complete blocks on the GPU, keyed by vLLM's block hash
     * of the registered profile; returns the blocks.
     */
    private static int publish(ZMQ.Socket pub, long seq, VllmBlockHasher hasher, int[] tokens) {
        VllmBlockHasher.Chain chain = hasher.chain(tokens, BLOCK_SIZE, null, null);
        List<EngineEvent> events = new ArrayList<>();
        Long parent = null;
        for (int from = 0; from < chain.blocks(); from += EVENT_BLOCKS) {
            long[] keys = new long[Math.min(EVENT_BLOCKS, chain.blocks() - from)];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = chain.nextKey();
            }
            int[] blockTokens = Arrays.copyOfRange(tokens, from * BLOCK_SIZE, (from + keys.length) * BLOCK_SIZE);
            events.add(new EngineEvent.Store(keys, parent, blockTokens, BLOCK_SIZE, "GPU", null));
            parent = keys[keys.length - 1];
        }
        pub.sendMore(new byte[0]);
        pub.sendMore(LiveFrames.seqFrame(seq));
        pub.send(BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, seq, events, 0));
        return chain.blocks();
    }

    /**
     * Posts the query body until every engine matches the prefix it holds ({@code (e + 1) * 64} blocks), or
     * {@code wait} has passed (then exits non-zero); returns each instance's {@code longest_matched}, in tokens.
     */
    private Map<String, Long> verify(byte[] body, Duration wait) throws Exception {
        Map<String, Long> expected = new TreeMap<>();
        for (int e = 0; e < ENGINES; e++) {
            expected.put(instance(e), (long) (e + 1) * PREFIX_BLOCKS * BLOCK_SIZE);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            HttpResponse<byte[]> r = post("/query", body);
            Map<String, Long> matched = r.statusCode() == 200 ? longestMatched(r.body()) : null;
            if (expected.equals(matched)) {
                return matched;
            }
            if (System.nanoTime() > deadline) {
                fail("POST /query answered " + r.statusCode() + " " + json(r.body()) + "; expected longest_matched "
                        + expected);
            }
            Thread.sleep(200);
        }
    }

    /** instance id → longest_matched of a /query answer, or null when it has another shape. */
    private static Map<String, Long> longestMatched(byte[] answer) throws IOException {
        Value root = MessagePack.newDefaultUnpacker(answer).unpackValue();
        if (!root.isMapValue()) {
            return null;
        }
        Value instances = root.asMapValue().map().get(string("instances"));
        if (instances == null || !instances.isMapValue()) {
            return null;
        }
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<Value, Value> e : instances.asMapValue().map().entrySet()) {
            Value longest =
                    e.getValue().isMapValue() ? e.getValue().asMapValue().map().get(string("longest_matched")) : null;
            if (!e.getKey().isStringValue() || longest == null || !longest.isIntegerValue()) {
                return null;
            }
            out.put(
                    e.getKey().asStringValue().asString(),
                    longest.asIntegerValue().toLong());
        }
        return out;
    }

    /** The C++ Conductor's query: {@code {"model", "block_size", "token_ids"}}, tokens a bin of LE u32s. */
    private static byte[] queryBody(int[] prompt) {
        ByteBuffer tokens = ByteBuffer.allocate(prompt.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int t : prompt) {
            tokens.putInt(t);
        }
        return msgpack(p -> {
            p.packMapHeader(3);
            p.packString("model").packString(MODEL);
            p.packString("block_size").packInt(BLOCK_SIZE);
            p.packString("token_ids").packBinaryHeader(tokens.capacity()).writePayload(tokens.array());
        });
    }

    /** What a request body writes. */
    private interface Body {
        void write(MessagePacker p) throws IOException;
    }

    private static byte[] msgpack(Body body) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.write(p);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private HttpResponse<byte[]> post(String path, byte[] body) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/msgpack")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    /** A msgpack answer as JSON text for messages, cut at 500 characters; the bytes as text when not msgpack. */
    private static String json(byte[] answer) {
        String s;
        try {
            s = MessagePack.newDefaultUnpacker(answer).unpackValue().toJson();
        } catch (IOException | RuntimeException e) {
            s = new String(answer, StandardCharsets.UTF_8);
        }
        return s.length() > 500 ? s.substring(0, 500) + "..." : s;
    }

    private static Value string(String s) {
        return ValueFactory.newString(s);
    }

    private static String instance(int e) {
        return "eng-" + e;
    }

    private static void fail(String message) {
        System.err.println("CppQueryFill: " + message);
        System.exit(1);
    }
}
