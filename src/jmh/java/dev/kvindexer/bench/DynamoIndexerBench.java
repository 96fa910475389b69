package dev.kvindexer.bench;

import dev.kvindexer.node.IndexerNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * NVIDIA Dynamo's indexer benchmark ({@code mooncake_bench}: deadline-driven replay of a Mooncake trace) run against
 * a kvindexer node in this JVM: events enter its partition actor as the ZMQ listener hands them over, queries take
 * the {@code /query} route's path, both issued at their deadlines without waiting for earlier ones, and a cell ends
 * when every query and event has completed. Logical operations are requests plus stored, removed and cleared events;
 * block operations are query hashes plus stored and removed hashes. A steady-state cell replays the trace over
 * {@code --duration-ms}; a sweep shrinks the window from MAX to MIN in STEPS logarithmic steps to raise the offered
 * rate. A cell kept up when replay and drain end within 1.10 times its window. With {@code --timeline engine} (as
 * Dynamo) each engine's timeline fills the window; {@code trace} keeps the trace's own arrival times, scaled. With
 * {@code --answer match} a query ends at the partition's reply (Dynamo's find_matches), without the route's breakdown
 * of it; with {@code --hashes prepared} each query's hashes are computed before the replay (Dynamo's bench hashes in
 * its preparation), where {@code tokens} hashes the prompt's tokens as the route does; with {@code --backend noop}
 * nothing is queried or applied, only each deadline kept: the replay's own cost on this machine. Each cell runs on a fresh partition of one node; the run fails unless the index ends holding exactly what the
 * engines hold.
 *
 * <pre>java -Xms2g -Xmx2g -cp target/benchmarks.jar dev.kvindexer.bench.DynamoIndexerBench TRACE.jsonl
 *     [--workers 1000] [--seed 42] [--duplicate 1] [--capacity 4096] [--warmup-ms 300] [--warmup-runs 10]
 *     [--duration-ms 30000] [--callers 7] [--issuers 1] [--threads 4] [--spin-us 0] [--timeline engine|trace]
 *     [--answer breakdown|match] [--hashes tokens|prepared] [--backend node|noop] [--sweep MIN MAX STEPS]</pre>
 */
public final class DynamoIndexerBench {
    private DynamoIndexerBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args[0].startsWith("--")) {
            System.err.println("usage: DynamoIndexerBench TRACE.jsonl [--workers N] [--seed S] [--duplicate D]"
                    + " [--capacity BLOCKS] [--warmup-ms W] [--warmup-runs N] [--duration-ms D] [--callers N]"
                    + " [--issuers N] [--threads N] [--spin-us US] [--timeline engine|trace]"
                    + " [--answer breakdown|match] [--hashes tokens|prepared] [--backend node|noop]"
                    + " [--sweep MIN MAX STEPS]");
            System.exit(2);
        }
        Path trace = Path.of(args[0]);
        int workers = 1000;
        long seed = 42;
        int duplicates = 1;
        // Dynamo's mock engines hold 16,384 blocks of 128 tokens: the same tokens in blocks of 512.
        int capacity = 4096;
        // Many passes at a sweep's rate: slow passes leave the compiler at work on the callers' path during the
        // measured cells.
        long warmupMs = 300;
        int warmupRuns = 10;
        long durationMs = 30_000;
        // More callers than cores keep more queries in flight for the sweep's peak, but put each other's time slices
        // inside the measured call: the steady state's latency is measured with one a core (--callers 2 here), the
        // layout of Dynamo's setup, which gives each query lane a core.
        int callers = 7;
        int issuers = 1;
        int threads = 4;
        long spinUs = 0;
        long[] sweep = null;
        boolean perEngine = true;
        boolean answer = true;
        boolean prepared = false;
        boolean noop = false;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--workers" -> workers = Integer.parseInt(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--duplicate" -> duplicates = Integer.parseInt(args[++i]);
                case "--capacity" -> capacity = Integer.parseInt(args[++i]);
                case "--warmup-ms" -> warmupMs = Long.parseLong(args[++i]);
                case "--warmup-runs" -> warmupRuns = Integer.parseInt(args[++i]);
                case "--duration-ms" -> durationMs = Long.parseLong(args[++i]);
                case "--callers" -> callers = Integer.parseInt(args[++i]);
                case "--issuers" -> issuers = Integer.parseInt(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--spin-us" -> spinUs = Long.parseLong(args[++i]);
                case "--timeline" ->
                    perEngine = switch (args[++i]) {
                        case "engine" -> true;
                        case "trace" -> false;
                        default -> throw new IllegalArgumentException("--timeline is engine or trace");
                    };
                case "--hashes" ->
                    prepared = switch (args[++i]) {
                        case "prepared" -> true;
                        case "tokens" -> false;
                        default -> throw new IllegalArgumentException("--hashes is tokens or prepared");
                    };
                case "--backend" ->
                    noop = switch (args[++i]) {
                        case "noop" -> true;
                        case "node" -> false;
                        default -> throw new IllegalArgumentException("--backend is node or noop");
                    };
                case "--answer" ->
                    answer = switch (args[++i]) {
                        case "breakdown" -> true;
                        case "match" -> false;
                        default -> throw new IllegalArgumentException("--answer is breakdown or match");
                    };
                case "--sweep" -> {
                    sweep = new long[3];
                    for (int k = 0; k < sweep.length; k++) {
                        sweep[k] = Long.parseLong(args[++i]);
                    }
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        DynamoBenchRun.Config settings =
                new DynamoBenchRun.Config(threads, callers, issuers, spinUs * 1_000, answer, prepared, noop);
        DynamoBenchSchedule s = DynamoBenchSchedule.prepare(trace, workers, duplicates, seed, capacity, perEngine);
        s.describe().forEach(System.out::println);
        System.out.printf(
                "%stimeline per %s, answer %s, hashes %s; %d callers, %d event issuers, %d event loops; spin %d us;"
                        + " %d cores%n",
                noop ? "NO-OP BACKEND (the replay alone): " : "",
                perEngine ? "engine" : "trace",
                answer ? "breakdown" : "match",
                prepared ? "prepared" : "from tokens",
                callers,
                issuers,
                threads,
                spinUs,
                Runtime.getRuntime().availableProcessors());

        try (IndexerNode node = DynamoBenchRun.startNode(settings)) {
            for (int run = 0; warmupMs > 0 && run < warmupRuns; run++) {
                // The JIT's warm-up, on a partition of its own: the measured cells start from an empty index.
                DynamoBenchRun.Result w = DynamoBenchRun.run(node, "warm-up-" + run, s, warmupMs, settings);
                System.out.printf(
                        "warm-up over %,d ms (discarded): achieved %,.0f logical ops/s, kept_up=%b%n",
                        warmupMs, achieved(s.logicalOps(), w), w.keptUp());
            }
            if (sweep == null) {
                print(s, DynamoBenchRun.run(node, "steady", s, durationMs, settings));
                return;
            }
            List<DynamoBenchRun.Result> cells = new ArrayList<>();
            for (long windowMs : windows(sweep[0], sweep[1], (int) sweep[2])) {
                DynamoBenchRun.Result r = DynamoBenchRun.run(node, "sweep-" + windowMs, s, windowMs, settings);
                print(s, r);
                cells.add(r);
            }
            summary(s, cells);
        }
    }

    /** Dynamo's sweep windows: logarithmically spaced from {@code max} down to {@code min} milliseconds. */
    static long[] windows(long min, long max, int steps) {
        if (steps < 2) {
            return new long[] {max};
        }
        long[] out = new long[steps];
        for (int i = 0; i < steps; i++) {
            double t = (double) i / (steps - 1);
            out[i] = Math.round(Math.exp(Math.log(max) * (1 - t) + Math.log(min) * t));
        }
        return out;
    }

    private static double offered(long ops, DynamoBenchRun.Result r) {
        return ops / (r.windowNanos() / 1e9);
    }

    private static double achieved(long ops, DynamoBenchRun.Result r) {
        return ops / (Math.max(r.elapsedNanos(), 1) / 1e9);
    }

    private static void print(DynamoBenchSchedule s, DynamoBenchRun.Result r) {
        System.out.printf("%n=== window %,d ms ===%n", r.windowNanos() / 1_000_000);
        System.out.printf(
                "offered %,.0f logical ops/s (%,.0f block ops/s); achieved %,.0f logical ops/s, %,.0f block ops/s"
                        + " (to the last completion)%n",
                offered(s.logicalOps(), r),
                offered(s.blockOps(), r),
                achieved(s.logicalOps(), r),
                achieved(s.blockOps(), r));
        System.out.printf(
                "query scheduled-to-completion p50/p99/p99.9/max %s us; service %s us%n",
                micros(r.scheduledToCompletion()), micros(r.service()));
        System.out.printf(
                "query queue wait p50/p99/p99.9/max %s us; event issue lag %s us%n",
                micros(r.queueWait()), micros(r.eventIssueLag()));
        System.out.printf(
                "issue span %,.1f ms, drain %,.1f ms, elapsed %,.1f ms; generator_valid=%b kept_up=%b%n",
                r.issueSpanNanos() / 1e6, r.drainNanos() / 1e6, r.elapsedNanos() / 1e6, r.generatorValid(), r.keptUp());
        System.out.printf(
                "last query done at %,.1f ms, last event applied at %,.1f ms; %d collections, %,d ms%n",
                r.queriesDoneNanos() / 1e6, r.eventsDoneNanos() / 1e6, r.collections(), r.collectionMillis());
        int cores = Runtime.getRuntime().availableProcessors();
        System.out.printf(
                "process CPU %,.1f ms over the cell (its lead and drain included): %.0f %% of %d cores; %,.1f us a"
                        + " logical op%n",
                r.cpuNanos() / 1e6,
                100.0 * r.cpuNanos() / ((double) (r.elapsedNanos() + DynamoBenchRun.LEAD_NANOS) * cores),
                cores,
                r.cpuNanos() / 1e3 / s.logicalOps());
        long named =
                r.cpuByThread().values().stream().mapToLong(Long::longValue).sum();
        StringBuilder line = new StringBuilder("  by thread, ms:");
        r.cpuByThread().entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(6)
                .forEach(e -> line.append(String.format(" %s %,.1f;", e.getKey(), e.getValue() / 1e6)));
        line.append(String.format(" the JVM's own threads (compiler, collector) %,.1f", (r.cpuNanos() - named) / 1e6));
        System.out.println(line);
    }

    private static void summary(DynamoBenchSchedule s, List<DynamoBenchRun.Result> cells) {
        System.out.printf(
                "%n%10s %14s %14s %16s %12s %12s %10s %8s%n",
                "window_ms",
                "offered_ops/s",
                "achieved_ops/s",
                "achieved_blk/s",
                "p99_e2e_us",
                "p99_svc_us",
                "drain_ms",
                "kept_up");
        DynamoBenchRun.Result peak = null;
        for (DynamoBenchRun.Result r : cells) {
            System.out.printf(
                    "%,10d %,14.0f %,14.0f %,16.0f %,12.1f %,12.1f %,10.1f %8b%n",
                    r.windowNanos() / 1_000_000,
                    offered(s.logicalOps(), r),
                    achieved(s.logicalOps(), r),
                    achieved(s.blockOps(), r),
                    percentile(r.scheduledToCompletion(), 990, 1000) / 1e3,
                    percentile(r.service(), 990, 1000) / 1e3,
                    r.drainNanos() / 1e6,
                    r.keptUp());
            if (r.keptUp() && (peak == null || r.elapsedNanos() < peak.elapsedNanos())) {
                peak = r;
            }
        }
        if (peak == null) {
            System.out.println("no cell kept up");
        } else {
            System.out.printf(
                    "peak kept up: %,.0f logical ops/s (%,.0f block ops/s) at window %,d ms, query p99 %,.1f us%n",
                    achieved(s.logicalOps(), peak),
                    achieved(s.blockOps(), peak),
                    peak.windowNanos() / 1_000_000,
                    percentile(peak.scheduledToCompletion(), 990, 1000) / 1e3);
        }
    }

    private static String micros(long[] values) {
        return String.format(
                "%,.1f/%,.1f/%,.1f/%,.1f (mean %,.1f)",
                percentile(values, 500, 1000) / 1e3,
                percentile(values, 990, 1000) / 1e3,
                percentile(values, 999, 1000) / 1e3,
                percentile(values, 1000, 1000) / 1e3,
                Arrays.stream(values).average().orElse(0) / 1e3);
    }

    /** Nearest rank, as Dynamo's bench reports. */
    static long percentile(long[] values, int numerator, int denominator) {
        if (values.length == 0) {
            return 0;
        }
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        long rank = Math.max(1, ((long) sorted.length * numerator + denominator - 1) / denominator);
        return sorted[(int) Math.min(rank - 1, sorted.length - 1)];
    }
}
