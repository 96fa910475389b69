package dev.kvindexer.bench;

import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.TierType;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;

/**
 * SGLang's router's question, MatchExternalKvPrefix, against a running node's gRPC port, as the router asks it: a
 * closed loop of {@code concurrency} calls in flight for {@code seconds}. First the bridge's side fills the node:
 * {@code workers} workers each report {@code prompts} prompts of {@code blocks} blocks (a shared first half, as a
 * system prompt, then their own). Prints calls a second and the latency percentiles.
 *
 * <pre>
 * java -jar target/kvindexer.jar serve --grpc-port 50051 &amp;
 * java -cp target/benchmarks.jar dev.kvindexer.bench.GrpcPrefixBench 127.0.0.1 50051 [workers] [prompts] [blocks]
 *     [concurrency] [seconds]
 * </pre>
 */
public final class GrpcPrefixBench {
    private GrpcPrefixBench() {}

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        int workers = arg(args, 2, 100);
        int prompts = arg(args, 3, 50);
        int blocks = arg(args, 4, 128);
        int concurrency = arg(args, 5, 16);
        int seconds = arg(args, 6, 15);
        Vertx vertx = Vertx.vertx();
        KVIndexerGrpcClient client =
                KVIndexerGrpcClient.create(GrpcClient.client(vertx), SocketAddress.inetSocketAddress(port, host));
        long[][] chains = new long[prompts][];
        SplittableRandom random = new SplittableRandom(42);
        long[] shared = random.longs(blocks / 2).toArray();
        for (int p = 0; p < prompts; p++) {
            chains[p] = LongStream.concat(LongStream.of(shared), random.longs(blocks - blocks / 2))
                    .toArray();
        }
        long fillStart = System.nanoTime();
        for (int w = 0; w < workers; w++) {
            ApplyExternalKvBatchRequest.Builder b = ApplyExternalKvBatchRequest.newBuilder()
                    .setWorkerId("bench-" + w)
                    .setWorkerAddress("http://10.0." + (w / 250) + "." + (w % 250) + ":30000")
                    .setSeq(1);
            for (int p = w % 4; p < prompts; p += 4) {
                b.addActions(ExternalKvAction.newBuilder()
                        .setType(ExternalKvActionType.ACTION_REPORT)
                        .setTier(TierType.TIER_HBM)
                        .addAllHashes(LongStream.of(chains[p]).boxed().toList()));
            }
            await(client.applyExternalKvBatch(b.build()));
        }
        System.out.printf(
                "filled %d workers x %d prompts of %d blocks in %.1f s%n",
                workers, (prompts + 3) / 4, blocks, (System.nanoTime() - fillStart) / 1e9);
        List<MatchExternalKvPrefixRequest> queries = Arrays.stream(chains)
                .map(c -> MatchExternalKvPrefixRequest.newBuilder()
                        .addAllHashes(LongStream.of(c).boxed().toList())
                        .build())
                .toList();
        run(client, queries, concurrency, 3); // warm-up
        long[] latencies = run(client, queries, concurrency, seconds);
        Arrays.sort(latencies);
        System.out.printf(
                "MatchExternalKvPrefix: %.0f calls/s, p50 %.0f us, p99 %.0f us, p99.9 %.0f us (%d calls, %d in flight)%n",
                latencies.length / (double) seconds,
                latencies[latencies.length / 2] / 1e3,
                latencies[(int) (latencies.length * 0.99)] / 1e3,
                latencies[(int) (latencies.length * 0.999)] / 1e3,
                latencies.length,
                concurrency);
        vertx.close();
    }

    /** A closed loop: each of {@code concurrency} callers asks again when answered; returns each call's nanoseconds. */
    private static long[] run(
            KVIndexerGrpcClient client, List<MatchExternalKvPrefixRequest> queries, int concurrency, int seconds)
            throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        long[] latencies = new long[4_000_000];
        AtomicLong count = new AtomicLong();
        CountDownLatch done = new CountDownLatch(concurrency);
        for (int c = 0; c < concurrency; c++) {
            int caller = c;
            new Object() {
                int i = caller;

                void next() {
                    if (System.nanoTime() >= end) {
                        done.countDown();
                        return;
                    }
                    long start = System.nanoTime();
                    client.matchExternalKvPrefix(queries.get(i++ % queries.size()))
                            .onComplete(ar -> {
                                if (ar.failed()) {
                                    throw new IllegalStateException(ar.cause());
                                }
                                long n = count.getAndIncrement();
                                if (n < latencies.length) {
                                    latencies[(int) n] = System.nanoTime() - start;
                                }
                                next();
                            });
                }
            }.next();
        }
        done.await();
        return Arrays.copyOf(latencies, (int) Math.min(count.get(), latencies.length));
    }

    private static <T> T await(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }

    private static int arg(String[] args, int i, int fallback) {
        return args.length > i ? Integer.parseInt(args[i]) : fallback;
    }
}
