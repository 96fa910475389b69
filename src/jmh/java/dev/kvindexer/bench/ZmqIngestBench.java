package dev.kvindexer.bench;

import dev.kvindexer.config.DurabilityConfig;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Engines publish vLLM batches over real ZMQ on loopback; how many blocks per second does an
 * indexer node apply, against a bare JeroMQ SUB receiving the same frames in the same run?
 *
 * <p>Each engine alternates a batch storing a fresh 16-block chain (256 tokens, block size 16) and a batch removing
 * it, so the index stays small and every batch does the same work. All batches are encoded before the clock starts;
 * one thread sends them, engine by engine in turn, through PUB sockets whose queues hold them all (nothing dropped).
 * The node's figure is from the first send until its counters show every event applied.
 *
 * <p>With a snapshot interval (milliseconds), each round also times a node that writes its data directory that often
 * while it ingests, holding {@code residentBlocks} more blocks (stored once, before the clock starts) that every
 * snapshot carries: the cost of the data directory, side by side with the node without one.
 *
 * <pre>java -Xmx6g -cp target/benchmarks.jar dev.kvindexer.bench.ZmqIngestBench [engines] [batchesPerEngine] [rounds]
 *     [snapshotIntervalMillis] [residentBlocks]</pre>
 */
public final class ZmqIngestBench {
    private static final int BLOCK_SIZE = 16;
    private static final int BLOCKS_PER_BATCH = 16;
    private static final int HWM = 1_000_000;

    private ZmqIngestBench() {}

    public static void main(String[] args) throws Exception {
        int engines = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        int batches = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        long intervalMillis = args.length > 3 ? Long.parseLong(args[3]) : 0;
        int residentBatches = (args.length > 4 ? Integer.parseInt(args[4]) : 0) / RecoveryBench.CHAIN;
        byte[][][] payloads = encode(engines, batches);
        long blocks = (long) engines * batches * BLOCKS_PER_BATCH;
        System.out.printf(
                "%d engines x %,d batches of %d blocks = %,d block operations (stores and removes)%n",
                engines, batches, BLOCKS_PER_BATCH, blocks);
        double[] raws = new double[rounds];
        double[] nodes = new double[rounds];
        double[] durables = new double[rounds];
        for (int round = 0; round < rounds; round++) {
            // Each phase starts on a settled heap, so neither pays for the other's garbage.
            System.gc();
            double raw = blocks / rawReceive(payloads);
            System.gc();
            double node = blocks / indexerIngest(payloads, DurabilityConfig.IN_MEMORY, residentBatches);
            raws[round] = raw;
            nodes[round] = node;
            System.out.printf(
                    "round %d: raw JeroMQ receive %.2f M blocks/s; indexer applied %.2f M blocks/s; ratio %.1f %%%n",
                    round, raw / 1e6, node / 1e6, 100 * node / raw);
            if (intervalMillis > 0) {
                System.gc();
                Path dir = Files.createTempDirectory("kvindexer-ingest-bench");
                double durable = blocks
                        / indexerIngest(
                                payloads,
                                DurabilityConfig.inDirectory(dir, Duration.ofMillis(intervalMillis)),
                                residentBatches);
                durables[round] = durable;
                System.out.printf(
                        "round %d: with --data-dir every %d ms %.2f M blocks/s; ratio %.1f %%%n",
                        round, intervalMillis, durable / 1e6, 100 * durable / raw);
            }
        }
        if (rounds > 1 && intervalMillis > 0) {
            double raw = median(Arrays.copyOfRange(raws, 1, rounds));
            double durable = median(Arrays.copyOfRange(durables, 1, rounds));
            System.out.printf(
                    "median of rounds 1-%d with --data-dir every %d ms: %.2f M blocks/s; ratio %.1f %%%n",
                    rounds - 1, intervalMillis, durable / 1e6, 100 * durable / raw);
        }
        if (rounds > 1) {
            // Round 0 is JIT warm-up; single rounds swing widely on a small machine, so the medians are the figure.
            double raw = median(Arrays.copyOfRange(raws, 1, rounds));
            double node = median(Arrays.copyOfRange(nodes, 1, rounds));
            System.out.printf(
                    "median of rounds 1-%d: raw JeroMQ receive %.2f M blocks/s; indexer applied %.2f M blocks/s; "
                            + "ratio %.1f %%%n",
                    rounds - 1, raw / 1e6, node / 1e6, 100 * node / raw);
        }
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    private static byte[][][] encode(int engines, int batches) {
        SplittableRandom rnd = new SplittableRandom(7);
        byte[][][] out = new byte[engines][batches][];
        for (int e = 0; e < engines; e++) {
            long[] hashes = new long[BLOCKS_PER_BATCH];
            for (int b = 0; b < batches; b++) {
                EngineEvent event;
                if (b % 2 == 0) {
                    for (int i = 0; i < hashes.length; i++) {
                        hashes[i] = rnd.nextLong();
                    }
                    event = new EngineEvent.Store(
                            hashes.clone(),
                            null,
                            rnd.ints(BLOCK_SIZE * BLOCKS_PER_BATCH, 0, 32_000).toArray(),
                            BLOCK_SIZE,
                            "GPU",
                            null);
                } else {
                    event = new EngineEvent.Remove(hashes.clone(), "GPU");
                }
                out[e][b] = BatchEncoder.batch(BatchEncoder.Format.VLLM_MAP, b, List.of(event), 0);
            }
        }
        return out;
    }

    /** Binds one XPUB per engine on loopback, its queue deep enough for every batch of the run. */
    private static ZMQ.Socket[] publishers(ZContext ctx, int engines) {
        ZMQ.Socket[] pubs = new ZMQ.Socket[engines];
        for (int e = 0; e < engines; e++) {
            pubs[e] = ctx.createSocket(SocketType.XPUB);
            pubs[e].setSndHWM(HWM);
            pubs[e].setLinger(0);
            pubs[e].bind("tcp://127.0.0.1:0");
        }
        return pubs;
    }

    private static void awaitSubscribers(ZMQ.Socket[] pubs) {
        for (ZMQ.Socket p : pubs) {
            p.setReceiveTimeOut(20_000);
            if (p.recv(0) == null) {
                throw new IllegalStateException("no subscriber on " + p.getLastEndpoint());
            }
        }
    }

    private static void sendAll(ZMQ.Socket[] pubs, byte[][][] payloads) {
        int batches = payloads[0].length;
        for (int b = 0; b < batches; b++) {
            byte[] seq = LiveFrames.seqFrame(b);
            for (int e = 0; e < pubs.length; e++) {
                pubs[e].sendMore(new byte[0]);
                pubs[e].sendMore(seq);
                pubs[e].send(payloads[e][b]);
            }
        }
    }

    /** Seconds for one SUB to receive every message (the same 3 frames the node reads). */
    private static double rawReceive(byte[][][] payloads) throws Exception {
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket[] pubs = publishers(ctx, payloads.length);
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.setRcvHWM(HWM);
            for (ZMQ.Socket p : pubs) {
                sub.connect(p.getLastEndpoint());
            }
            sub.subscribe(new byte[0]);
            awaitSubscribers(pubs);
            long expected = (long) payloads.length * payloads[0].length;
            long[] received = {0};
            Thread receiver = new Thread(() -> {
                while (received[0] < expected) {
                    sub.recv(0);
                    while (sub.hasReceiveMore()) {
                        sub.recv(0);
                    }
                    received[0]++;
                }
            });
            long t0 = System.nanoTime();
            receiver.start();
            sendAll(pubs, payloads);
            receiver.join();
            return (System.nanoTime() - t0) / 1e9;
        }
    }

    /** Seconds for a node (2 event loops, 1 ingest thread) to apply every event. */
    private static double indexerIngest(byte[][][] payloads, DurabilityConfig durability, int residentBatches)
            throws Exception {
        IndexerNode node = IndexerNode.start(
                new ServeConfig("127.0.0.1", 0, 2, 1, List.of(), null, "default", "default", List.of(), false, 0)
                        .withDurability(durability));
        try (ZContext ctx = new ZContext()) {
            HttpClient http =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            if (residentBatches > 0) {
                RecoveryBench.fill(node, ctx, http, residentBatches, 1, 1_000_000);
            }
            ZMQ.Socket[] pubs = publishers(ctx, payloads.length);
            for (int e = 0; e < pubs.length; e++) {
                String body = "{\"instance_id\":" + (e + 1) + ",\"endpoint\":\"" + pubs[e].getLastEndpoint()
                        + "\",\"model_name\":\"m\",\"block_size\":" + BLOCK_SIZE + "}";
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + "/register"))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 201) {
                    throw new IllegalStateException("register: " + r.statusCode() + " " + r.body());
                }
            }
            awaitSubscribers(pubs);
            EventCounters counters = node.counters();
            long expectedEvents = (long) payloads.length * payloads[0].length + residentBatches;
            long t0 = System.nanoTime();
            sendAll(pubs, payloads);
            while (counters.appliedCount("stored", "ok") + counters.appliedCount("removed", "ok") < expectedEvents) {
                // Sleep, not spin: on two cores a spinning poller takes a core from the node it is timing.
                Thread.sleep(1);
                if (System.nanoTime() - t0 > 120_000_000_000L) {
                    throw new IllegalStateException(
                            "not all applied: " + counters.appliedSnapshot() + " " + counters.warningSnapshot());
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (!counters.warningSnapshot().isEmpty()) {
                throw new IllegalStateException("anomalies: " + counters.warningSnapshot());
            }
            return seconds;
        } finally {
            node.close();
        }
    }
}
