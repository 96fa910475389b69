package dev.kvindexer.bench;

import dev.kvindexer.config.ServeConfig;
import dev.kvindexer.metrics.EventCounters;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.wire.LiveFrames;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * How long a replica joining with {@code --peers} takes to recover one large partition from a peer, node to node
 * on loopback, and how many bytes its peer sends per block.
 *
 * <p>Node A takes {@code blocks} blocks over real ZMQ from {@code engines} engines that store the same 128-block
 * chains (so every block has {@code engines} holders); then, round after round, a node B starts with A as its peer
 * and the figure is B's own recovery time ({@code kvindexer_recovery_duration_seconds}). The sizes are of A's
 * /dump as JSON and, where the node offers it, as a binary snapshot.
 *
 * <pre>java -Xmx8g -cp target/benchmarks.jar dev.kvindexer.bench.RecoveryBench [blocks] [engines] [rounds]</pre>
 */
public final class RecoveryBench {
    private static final int BLOCK_SIZE = 16;
    static final int CHAIN = 128;

    private RecoveryBench() {}

    public static void main(String[] args) throws Exception {
        int blocks = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int engines = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        int batches = blocks / CHAIN;
        IndexerNode a = IndexerNode.start(ServeConfig.local(0));
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (ZContext ctx = new ZContext()) {
            fill(a, ctx, http, batches, engines, 1);
            String base = "http://127.0.0.1:" + a.httpPort() + "/dump";
            long json = http.send(
                            HttpRequest.newBuilder(URI.create(base)).build(), HttpResponse.BodyHandlers.ofByteArray())
                    .body()
                    .length;
            HttpResponse<byte[]> binary = http.send(
                    HttpRequest.newBuilder(URI.create(base))
                            .header("Accept", "application/x-kvindexer-snapshot")
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            long stored = (long) batches * CHAIN;
            System.out.printf(
                    "partition of %,d blocks x %d holders; /dump JSON %,d bytes (%.1f B/block)%n",
                    stored, engines, json, (double) json / stored);
            if (binary.headers().firstValue("content-type").orElse("").contains("snapshot")) {
                System.out.printf(
                        "binary snapshot %,d bytes (%.1f B/block)%n",
                        binary.body().length, (double) binary.body().length / stored);
            }
            long[] millis = new long[rounds];
            for (int r = 0; r < rounds; r++) {
                System.gc();
                IndexerNode b =
                        IndexerNode.start(ServeConfig.local(0).withPeers(List.of("http://127.0.0.1:" + a.httpPort())));
                try {
                    millis[r] = b.recovery().millis();
                    System.out.printf(
                            "round %d: recovered %,d events in %d ms (%s)%n",
                            r, b.recovery().events(), millis[r], b.recovery().exact() ? "exact" : "not exact");
                } finally {
                    b.close();
                }
            }
            long[] sorted = millis.clone();
            Arrays.sort(sorted);
            System.out.printf(
                    "recovery median %d ms, best %d ms over %d rounds%n", sorted[rounds / 2], sorted[0], rounds);
        } finally {
            a.close();
        }
    }

    /**
     * Node {@code a} takes {@code batches} fresh 128-block chains from each of {@code engines} publishers, registered as
     * instances {@code firstInstance} on; returns once every one is applied.
     */
    static void fill(IndexerNode a, ZContext ctx, HttpClient http, int batches, int engines, int firstInstance)
            throws Exception {
        long before = a.counters().appliedCount("stored", "ok");
        SplittableRandom rnd = new SplittableRandom(11);
        byte[][] payloads = new byte[batches][];
        for (int b = 0; b < batches; b++) {
            long[] hashes = rnd.longs(CHAIN).toArray();
            payloads[b] = BatchEncoder.batch(
                    BatchEncoder.Format.VLLM_MAP,
                    b,
                    List.of(new EngineEvent.Store(
                            hashes,
                            null,
                            rnd.ints(BLOCK_SIZE * CHAIN, 0, 32_000).toArray(),
                            BLOCK_SIZE,
                            "GPU",
                            null)),
                    0);
        }
        ZMQ.Socket[] pubs = new ZMQ.Socket[engines];
        for (int e = 0; e < engines; e++) {
            pubs[e] = ctx.createSocket(SocketType.XPUB);
            pubs[e].setSndHWM(batches + 10);
            pubs[e].setLinger(0);
            pubs[e].bind("tcp://127.0.0.1:0");
            String body = "{\"instance_id\":" + (e + firstInstance) + ",\"endpoint\":\"" + pubs[e].getLastEndpoint()
                    + "\",\"model_name\":\"m\",\"block_size\":" + BLOCK_SIZE + "}";
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.httpPort() + "/register"))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 201) {
                throw new IllegalStateException("register: " + r.statusCode() + " " + r.body());
            }
            pubs[e].setReceiveTimeOut(20_000);
            if (pubs[e].recv(0) == null) {
                throw new IllegalStateException("no subscriber");
            }
        }
        EventCounters counters = a.counters();
        for (int b = 0; b < batches; b++) {
            for (ZMQ.Socket p : pubs) {
                p.sendMore(new byte[0]);
                p.sendMore(LiveFrames.seqFrame(b));
                p.send(payloads[b]);
            }
        }
        long expected = before + (long) batches * engines;
        while (counters.appliedCount("stored", "ok") < expected) {
            Thread.sleep(10);
        }
    }
}
