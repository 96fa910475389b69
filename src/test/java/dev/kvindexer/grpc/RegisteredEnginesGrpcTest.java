package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.get;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.grpc.v1.ExternalKvPrefixMatch;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineEvent;
import dev.kvindexer.sim.EngineHashKind;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.LocalNode;
import dev.kvindexer.support.MetricsPage;
import dev.kvindexer.support.TestPublisher;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SGLang engines registered with kvindexer itself (HTTP /register, their KV events read over ZMQ) are answered on the
 * gRPC port by their own block hashes, the numbers SGLang's router sends: the same match {@code /query} gives for the
 * prompt's tokens, through device and host memory.
 */
class RegisteredEnginesGrpcTest {
    private static final int BLOCK = 16;
    private static final String ADDRESS = "http://10.0.0.7:30000";

    @RegisterExtension
    final LocalNode indexer = new LocalNode();

    @Test
    void theRoutersGoldenChainIsWhatTheTestEngineHashes() {
        // SGLang's router pins these (its kv_events_hash_parity fixture); our engine simulator must hash alike.
        assertArrayEquals(new long[] {-3488128144981237669L}, EngineHashKind.sglangChain(new int[] {1, 2, 3, 4}, 4));
        assertArrayEquals(
                new long[] {-1702009526849766914L, 903318264012984157L, -8265893088400908305L},
                EngineHashKind.sglangChain(new int[] {7, 8, 9}, 1));
        assertArrayEquals(
                new long[] {
                    8635429971592222890L,
                    1256577331724852459L,
                    5689809685380680247L,
                    3927976462491479733L,
                    5639345789331840936L,
                    -4601255381563393033L,
                    3368460852864325515L,
                    1233425155141659070L
                },
                EngineHashKind.sglangChain(IntStream.rangeClosed(1, 128).toArray(), 16));
    }

    @Test
    void registeredEnginesAnswerByEngineHashesAsQueryDoes() throws Exception {
        int[] tokens = IntStream.rangeClosed(1, 160).toArray();
        long[] chain = EngineHashKind.sglangChain(tokens, BLOCK); // 10 blocks
        try (TestPublisher seven = indexer.engine();
                TestPublisher eight = indexer.engine();
                TestPublisher nine = indexer.engine()) {
            register(7, seven, ADDRESS);
            register(8, eight, "http://10.0.0.8:30000");
            register(9, nine, null);
            // Engine 7: blocks 0-7 in GPU memory, 8 in host memory; engine 8: blocks 0-2; engine 9 (no address): all.
            seven.publish("", 0, store(Arrays.copyOf(chain, 8), null, Arrays.copyOf(tokens, 128), "GPU"));
            seven.publish(
                    "", 1, store(new long[] {chain[8]}, chain[7], Arrays.copyOfRange(tokens, 128, 144), "CPU_PINNED"));
            eight.publish("", 0, store(Arrays.copyOf(chain, 3), null, Arrays.copyOf(tokens, 48), "GPU"));
            nine.publish("", 0, store(chain, null, tokens, "GPU"));
            Await.until(
                    "every batch applied",
                    Await.PATIENCE,
                    () -> indexer.node().counters().appliedCount("stored", "ok") == 4);

            GrpcClient grpc = GrpcClient.client(indexer.node().vertx());
            int port = indexer.startGrpc();
            KVIndexerGrpcClient client =
                    KVIndexerGrpcClient.create(grpc, SocketAddress.inetSocketAddress(port, "127.0.0.1"));

            MatchExternalKvPrefixResponse r = get(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                    .addAllHashes(LongStream.of(chain).boxed().toList())
                    .build()));
            assertEquals(
                    List.of("7@" + ADDRESS + "=9", "8@http://10.0.0.8:30000=3"),
                    r.getMatchesList().stream()
                            .map(RegisteredEnginesGrpcTest::show)
                            .toList(),
                    "longest first; engine 9 has no address and is left out");
            assertEquals(9, r.getBestPrefixBlocks());

            // GET /workers shows the address a registration gave, and nothing for one that gave none.
            io.vertx.core.json.JsonArray workers = new io.vertx.core.json.JsonArray(
                    indexer.http().get("/workers").body());
            assertEquals(ADDRESS, workers.getJsonObject(0).getString("worker_address"));
            assertEquals(false, workers.getJsonObject(2).containsKey("worker_address"));

            // The same prompt by its tokens, over HTTP: the reach through host memory, in tokens.
            JsonObject instances = queryInstances(tokens);
            assertEquals(9 * BLOCK, instances.getJsonObject("7").getInteger("cpu"));
            assertEquals(3 * BLOCK, instances.getJsonObject("8").getInteger("cpu"));

            MatchExternalKvPrefixResponse capped =
                    get(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                            .addAllHashes(LongStream.of(chain).boxed().toList())
                            .setMaxBlocks(2)
                            .build()));
            assertEquals(2, capped.getBestPrefixBlocks());

            MatchExternalKvPrefixResponse stranger =
                    get(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                            .addHashes(chain[1])
                            .addHashes(chain[2])
                            .build()));
            assertEquals(0, stranger.getMatchesCount(), "a prompt must start at its first block");

            // The node's /metrics shows the port: calls by method and code, and what the bridge reported (nothing).
            GrpcFixture.status(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.getDefaultInstance()));
            MetricsPage page = MetricsPage.of(indexer.http());
            assertEquals(3, page.value("kvindexer_grpc_requests_total{method=\"MatchExternalKvPrefix\",code=\"OK\"}"));
            assertEquals(
                    1,
                    page.value(
                            "kvindexer_grpc_requests_total{method=\"MatchExternalKvPrefix\",code=\"INVALID_ARGUMENT\"}"));
            assertEquals(0, page.value("kvindexer_grpc_prefix_inflight"));
            assertEquals(32, page.value("kvindexer_grpc_prefix_max_inflight"));
            assertEquals(0, page.value("kvindexer_grpc_blocks"));
        }
    }

    private static String show(ExternalKvPrefixMatch m) {
        return m.getWorkerId() + "@" + m.getWorkerAddress() + "=" + m.getMatchedPrefixBlocks();
    }

    private void register(long id, TestPublisher engine, String address) {
        JsonObject body = new JsonObject()
                .put("instance_id", id)
                .put("endpoint", engine.endpoint())
                .put("model_name", "m")
                .put("block_size", BLOCK);
        if (address != null) {
            body.put("worker_address", address);
        }
        HttpResponse<String> r = indexer.http().post("/register", body.encode());
        assertEquals(201, r.statusCode(), r.body());
        engine.awaitSubscriber();
    }

    private JsonObject queryInstances(int[] tokens) {
        HttpResponse<String> r = indexer.http()
                .post(
                        "/query",
                        new JsonObject()
                                .put("model_name", "m")
                                .put(
                                        "token_ids",
                                        new JsonArray(
                                                IntStream.of(tokens).boxed().toList()))
                                .encode());
        assertEquals(200, r.statusCode(), r.body());
        return new JsonObject(r.body()).getJsonObject("instances");
    }

    private static byte[] store(long[] hashes, Long parent, int[] tokens, String medium) {
        return BatchEncoder.batch(
                BatchEncoder.Format.SGLANG_ARRAY,
                1.0,
                List.of(new EngineEvent.Store(hashes, parent, tokens, BLOCK, medium, null)),
                0);
    }
}
