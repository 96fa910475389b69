package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.get;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.grpc.v1.ExternalKvPrefixMatch;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.node.IndexerNode;
import dev.kvindexer.sim.BatchEncoder;
import dev.kvindexer.sim.EngineConfig;
import dev.kvindexer.sim.EngineHashKind;
import dev.kvindexer.sim.RegisterClient;
import dev.kvindexer.sim.SimulatedEngine;
import dev.kvindexer.sim.SyntheticPrompts;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterFixture;
import dev.kvindexer.support.ClusterNodes;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * In a sharded cluster (one copy of each engine), SGLang's prefix query asked of either node answers for every engine,
 * wherever its shard lives, and answers what {@code /query} answers for the same prompt's tokens.
 */
class GrpcClusterTest {
    private static final int ENGINES = 4;

    private final ClusterNodes cluster = new ClusterNodes();
    private final ClusterFixture fixture = new ClusterFixture();
    private final List<SimulatedEngine> engines = new ArrayList<>();

    @AfterEach
    void stop() {
        engines.forEach(SimulatedEngine::close);
        fixture.close();
        cluster.close();
    }

    @Test
    void everyNodeAnswersForEveryShardAsQueryDoes() throws Exception {
        List<IndexerNode> nodes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            nodes.add(cluster.start(c ->
                    c.withCluster(c.cluster().withReplicationFactor(1).withReconcileInterval(Duration.ofSeconds(1)))));
        }
        List<KVIndexerGrpcClient> clients = new ArrayList<>();
        for (IndexerNode n : nodes) {
            int port = get(n.serveGrpc(
                    new GrpcConfig("127.0.0.1", 0, 32, ClusterFixture.MODEL, "default"),
                    SecurityConfig.NONE,
                    RecoveryConfig.DEFAULT,
                    1));
            clients.add(KVIndexerGrpcClient.create(
                    GrpcClient.client(n.vertx()), SocketAddress.inetSocketAddress(port, "127.0.0.1")));
        }
        for (int i = 0; i < ENGINES; i++) {
            SimulatedEngine e = SimulatedEngine.start(EngineConfig.local(301 + i, 0)
                    .withCache(ClusterFixture.BLOCK, ClusterFixture.CAPACITY, 0)
                    .withFormat(BatchEncoder.Format.SGLANG_ARRAY)
                    .withHashKind(EngineHashKind.SGLANG));
            engines.add(e);
            JsonObject body = RegisterClient.body(e, ClusterFixture.MODEL, "default")
                    .put("worker_address", "http://10.0.0." + i + ":30000");
            HttpResponse<String> r = fixture.http(nodes.get(0).httpPort()).post("/register", body.encode());
            assertEquals(201, r.statusCode(), r.body());
        }
        fixture.awaitSplit(nodes, ENGINES);
        for (SimulatedEngine e : engines) {
            ClusterFixture.awaitSubscribers(e, 1);
        }
        SyntheticPrompts source = SyntheticPrompts.standard(23, ClusterFixture.BLOCK);
        List<int[]> prompts = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            int[] p = source.next();
            prompts.add(p);
            engines.get(i % ENGINES).submit(p);
        }
        ClusterFixture.awaitIdle(engines.toArray(SimulatedEngine[]::new));

        Await.until("both nodes answer over gRPC what /query answers", ClusterFixture.WAIT, () -> {
            for (int[] p : prompts) {
                Map<String, Integer> expected = byQuery(nodes.get(0), p);
                if (expected.isEmpty()) {
                    return false;
                }
                for (int n = 0; n < nodes.size(); n++) {
                    if (!expected.equals(byQuery(nodes.get(n), p)) || !expected.equals(byGrpc(clients.get(n), p))) {
                        return false;
                    }
                }
            }
            return true;
        });
    }

    /** {@code /query}'s answer as instance → reach through host memory, in blocks, where it is at least one. */
    private Map<String, Integer> byQuery(IndexerNode node, int[] prompt) {
        HttpResponse<String> r = fixture.query(node.httpPort(), prompt);
        Map<String, Integer> out = new TreeMap<>();
        if (r.statusCode() != 200
                || r.headers().firstValue("x-kvindexer-missing-instances").isPresent()) {
            return Map.of("incomplete", r.statusCode());
        }
        JsonObject instances = new JsonObject(r.body()).getJsonObject("instances");
        instances.forEach(e -> {
            int blocks = ((JsonObject) e.getValue()).getInteger("cpu") / ClusterFixture.BLOCK;
            if (blocks > 0) {
                out.put(e.getKey(), blocks);
            }
        });
        return out;
    }

    private static Map<String, Integer> byGrpc(KVIndexerGrpcClient client, int[] prompt) {
        long[] hashes = EngineHashKind.sglangChain(prompt, ClusterFixture.BLOCK);
        Map<String, Integer> out = new TreeMap<>();
        try {
            for (ExternalKvPrefixMatch m : get(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                            .addAllHashes(LongStream.of(hashes).boxed().toList())
                            .build()))
                    .getMatchesList()) {
                out.put(m.getWorkerId(), m.getMatchedPrefixBlocks());
            }
        } catch (Exception e) {
            return Map.of("failed: " + e, 0);
        }
        return out;
    }
}
