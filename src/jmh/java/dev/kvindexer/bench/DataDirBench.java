package dev.kvindexer.bench;

import dev.kvindexer.config.DurabilityConfig;
import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.node.IndexerNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.zeromq.ZContext;

/**
 * What the data directory costs: how long a node takes to write one snapshot of a large partition (the actors'
 * snapshot step and the file, fsync included) and how many bytes it takes, and how long a node started on the
 * directory with no peer takes to load it.
 *
 * <p>Node A takes {@code blocks} blocks over real ZMQ (fresh 128-block chains, block size 16, one engine) with a data
 * directory written every second; the write figures are read from its /metrics over {@code rounds} writes. Then A
 * stops, and round after round a node B starts on the same directory; the load figure is B's recovery time.
 *
 * <pre>java -Xmx8g -cp target/benchmarks.jar dev.kvindexer.bench.DataDirBench [blocks] [rounds] [dir]</pre>
 */
public final class DataDirBench {
    private DataDirBench() {}

    public static void main(String[] args) throws Exception {
        int blocks = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path dir = args.length > 2 ? Path.of(args[2]) : Files.createTempDirectory("kvindexer-datadir-bench");
        int batches = blocks / RecoveryBench.CHAIN;
        ServeConfig config =
                ServeConfig.local(0).withDurability(DurabilityConfig.inDirectory(dir, Duration.ofSeconds(1)));
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        long stored = (long) batches * RecoveryBench.CHAIN;
        try (ZContext ctx = new ZContext()) {
            IndexerNode a = IndexerNode.start(config);
            try {
                RecoveryBench.fill(a, ctx, http, batches, 1, 1);
                double[] seconds = new double[rounds];
                long bytes = 0;
                double writes = metric(http, a, "kvindexer_snapshot_writes_total{outcome=\"ok\"}");
                for (int r = 0; r < rounds; r++) {
                    // A write that started during the fill may hold fewer blocks: count from the next one on.
                    double after = writes + r + 2;
                    while (metric(http, a, "kvindexer_snapshot_writes_total{outcome=\"ok\"}") < after) {
                        Thread.sleep(20);
                    }
                    seconds[r] = metric(http, a, "kvindexer_snapshot_last_write_seconds");
                    bytes = (long) metric(http, a, "kvindexer_snapshot_last_write_bytes");
                    System.out.printf("write %d: %,d bytes in %.0f ms%n", r, bytes, seconds[r] * 1000);
                }
                Arrays.sort(seconds);
                System.out.printf(
                        "%,d blocks: snapshot %,d bytes (%.1f B/block); write median %.0f ms, best %.0f ms%n",
                        stored, bytes, (double) bytes / stored, seconds[rounds / 2] * 1000, seconds[0] * 1000);
            } finally {
                a.close();
            }
            long[] millis = new long[rounds];
            for (int r = 0; r < rounds; r++) {
                System.gc();
                IndexerNode b = IndexerNode.start(config);
                try {
                    millis[r] = b.recovery().millis();
                    System.out.printf(
                            "load %d: %,d blocks in %d ms (%s)%n",
                            r, b.recovery().events(), millis[r], b.recovery().peer());
                } finally {
                    b.close();
                }
            }
            Arrays.sort(millis);
            System.out.printf("load median %d ms, best %d ms over %d rounds%n", millis[rounds / 2], millis[0], rounds);
        }
    }

    private static double metric(HttpClient http, IndexerNode node, String sample) throws Exception {
        String page = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        for (String line : page.split("\n")) {
            if (line.startsWith(sample + " ")) {
                return Double.parseDouble(line.substring(sample.length() + 1));
            }
        }
        throw new IllegalStateException("no " + sample + " on /metrics");
    }
}
