package dev.kvindexer.bench;

import dev.kvindexer.sim.LoopbackEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

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
    private static final int BLOCK_SIZE = LoopbackEngines.BLOCK_SIZE;
    private static final int TOKENS = 8192;
    private static final int PREFIX_BLOCKS = 64;
    private static final int VOCABULARY = 32_000;

    private static final String MODEL = "m";
    private static final Duration WAIT = Duration.ofSeconds(120);

    private final String base;

    private CppQueryFill(String base) {
        this.base = base;
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
        try {
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
            byte[] body;
            long blocks;
            try (LoopbackEngines engines = new LoopbackEngines(fill.base, MODEL)) {
                body = engines.conductorQuery(prompt);
                blocks = fill.fill(engines, prompt, prompts);
            }
            // Again now that the publishers are closed: wrk runs after this program, on the blocks left behind.
            Map<String, Long> matched = fill.verify(body, WAIT);
            Files.write(out, body);
            System.out.printf(
                    "%d engines, %,d blocks over ZMQ in %.1f s; /query answers longest_matched %s; %,d-byte body in %s%n",
                    ENGINES, blocks, (System.nanoTime() - t0) / 1e9, matched, body.length, out);
        } catch (IOException e) {
            fail(e.getMessage());
        }
    }

    /**
     * Registers and feeds the engines; returns the blocks published. The sockets stay open until every engine's
     * prefix shows in {@code /query}: each engine sends it last, so by then everything before it has been applied.
     */
    private long fill(LoopbackEngines engines, int[] prompt, int prompts) throws Exception {
        for (int e = 0; e < ENGINES; e++) {
            // An earlier fill's registration would conflict with this one's new endpoint.
            engines.unregister(e);
        }
        for (int e = 0; e < ENGINES; e++) {
            engines.registerConductor(WAIT);
        }
        SplittableRandom rnd = new SplittableRandom(8);
        long blocks = 0;
        for (int e = 0; e < ENGINES; e++) {
            for (int p = 0; p < prompts; p++) {
                blocks += engines.store(e, rnd.ints(TOKENS, 0, VOCABULARY).toArray());
            }
            blocks += engines.store(e, Arrays.copyOf(prompt, (e + 1) * PREFIX_BLOCKS * BLOCK_SIZE));
        }
        engines.awaitMatched(engines.conductorQuery(prompt), expected(), WAIT);
        return blocks;
    }

    /** Posts the query body until every engine matches the prefix it holds, or {@code wait} has passed. */
    private Map<String, Long> verify(byte[] body, Duration wait) throws Exception {
        try (LoopbackEngines client = new LoopbackEngines(base, MODEL)) {
            return client.awaitMatched(body, expected(), wait);
        }
    }

    /** Engine e holds the first {@code (e + 1) * 64} blocks of the prompt: that many tokens matched. */
    private static Map<String, Long> expected() {
        Map<String, Long> expected = new TreeMap<>();
        for (int e = 0; e < ENGINES; e++) {
            expected.put(LoopbackEngines.instance(e), (long) (e + 1) * PREFIX_BLOCKS * BLOCK_SIZE);
        }
        return expected;
    }

    private static void fail(String message) {
        System.err.println("CppQueryFill: " + message);
        System.exit(1);
    }
}
