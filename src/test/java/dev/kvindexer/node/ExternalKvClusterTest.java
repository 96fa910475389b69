package dev.kvindexer.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.config.GrpcConfig;
import dev.kvindexer.config.RecoveryConfig;
import dev.kvindexer.config.SecurityConfig;
import dev.kvindexer.event.PartitionKey;
import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ExpectedWorker;
import dev.kvindexer.grpc.v1.ExternalKvAction;
import dev.kvindexer.grpc.v1.ExternalKvActionType;
import dev.kvindexer.grpc.v1.KVIndexerGrpcClient;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.grpc.v1.TierHashes;
import dev.kvindexer.grpc.v1.TierType;
import dev.kvindexer.support.Await;
import dev.kvindexer.support.ClusterNodes;
import dev.kvindexer.support.HttpJson;
import dev.kvindexer.support.MetricsPage;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * SGLang's bridge feeding one member of a kvindexer cluster (docs/api/sglang-grpc.md#in-a-cluster): every member
 * answers what the bridge told any of them as soon as the bridge hears back, a member that starts later copies it
 * before it serves, and what a member is sent without the cluster's seal, or malformed, changes nothing.
 */
class ExternalKvClusterTest {
    private static final String TOKEN = "cluster-secret";
    private static final long[] PROMPT = {11, 12, 13, 14};

    private final ClusterNodes cluster = new ClusterNodes();
    private final List<IndexerNode> nodes = new ArrayList<>();
    private final List<KVIndexerGrpcClient> clients = new ArrayList<>();

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** A member with the gRPC port served as `serve --grpc-port` serves it; its client. */
    private KVIndexerGrpcClient member() throws Exception {
        return member("m");
    }

    /** A member whose gRPC port serves {@code model}. */
    private KVIndexerGrpcClient member(String model) throws Exception {
        IndexerNode node = cluster.start(c -> c.withSecurity(new SecurityConfig(TOKEN, false, null, null)));
        int port = get(node.serveGrpc(
                new GrpcConfig("127.0.0.1", 0, GrpcConfig.DEFAULT_PREFIX_MAX_INFLIGHT, model, "default"),
                SecurityConfig.NONE,
                RecoveryConfig.DEFAULT,
                1));
        KVIndexerGrpcClient client = KVIndexerGrpcClient.create(
                GrpcClient.client(node.vertx()), SocketAddress.inetSocketAddress(port, "127.0.0.1"));
        nodes.add(node);
        clients.add(client);
        return client;
    }

    @Test
    void everyMemberAnswersWhatTheBridgeToldAny() throws Exception {
        KVIndexerGrpcClient a = member();
        KVIndexerGrpcClient b = member();
        // The first message between two members opens their bus connection; wait for it once, off the record.
        get(a.applyExternalKvBatch(batch("warm-up", 99)));
        Await.until("the first change on the other member", Await.PATIENCE, () -> {
            try {
                return prefix(b, 99).equals("warm-up=1");
            } catch (Exception e) {
                return false;
            }
        });
        get(a.configureExpectedWorkers(ConfigureExpectedWorkersRequest.newBuilder()
                .addWorkers(ExpectedWorker.newBuilder().setWorkerId("w1").setWorkerAddress("http://w1"))
                .addWorkers(ExpectedWorker.newBuilder().setWorkerId("w2").setWorkerAddress("http://w2"))
                .build()));
        get(a.applyExternalKvBatch(batch("w1", 11, 12, 13)));
        get(a.replaceExternalKvSnapshot(ReplaceExternalKvSnapshotRequest.newBuilder()
                .setWorkerId("w2")
                .setWorkerAddress("http://w2")
                .setWorkerEpoch("e1")
                .setAppliedSeq(4)
                .addHashesByTier(
                        TierHashes.newBuilder().setTier(TierType.TIER_DRAM).addHashes(11))
                .build()));
        // No wait: each change was on every member before the bridge heard back.
        assertEquals("w1=3 w2=1", prefix(b));
        assertEquals(prefix(a), prefix(b));

        get(b.applyExternalKvBatch(batch("w2", 12).toBuilder()
                .setWorkerEpoch("e1")
                .setEnforceSequence(true)
                .setSeq(5)
                .build()));
        assertEquals("w1=3 w2=2", prefix(a), "a change sent to the other member is here too");

        KVIndexerGrpcClient c = member();
        assertEquals("w1=3 w2=2", prefix(c), "a member that starts copies the state before it serves");
        assertTrue(
                get(c.applyExternalKvBatch(batch("w2", 12).toBuilder()
                                .setWorkerEpoch("e1")
                                .setEnforceSequence(true)
                                .setSeq(5)
                                .build()))
                        .getDuplicate(),
                "the copy keeps the worker's fence");
        get(c.applyExternalKvBatch(batch("w1", 14)));
        assertEquals("w1=4 w2=2", prefix(a));
        assertEquals("w1=4 w2=2", prefix(b));

        // what the members' metrics say of it: every change taken, none missed
        ExternalKvMetrics first = metrics(nodes.get(0));
        assertEquals(0, first.missed(), "every change sent from the first member was applied");
        assertTrue(metrics(nodes.get(1)).applied() >= 5, "the second took the first's changes");
        assertEquals(1, metrics(nodes.get(2)).copied(), "the third began from another's state");
        assertEquals(0, first.copied(), "the first began from none");

        KVIndexerGrpcClient other = member("other-model");
        assertEquals("", prefix(other), "a member serving another model copies nothing of this one's bridge");
        get(other.configureExpectedWorkers(ConfigureExpectedWorkersRequest.getDefaultInstance()));
        assertEquals("w1=4 w2=2", prefix(a), "and its bridge's changes stay among its own model's members");
    }

    @Test
    void aChangeWithoutTheClustersSealOrMalformedChangesNothing() throws Exception {
        KVIndexerGrpcClient a = member();
        member();
        get(a.applyExternalKvBatch(batch("w1", 11, 12)));
        String other = nodes.get(1).membership().nodeId();
        byte[] forged = new byte[] {3};
        String scope = new PartitionKey("m", "default").dumpKey() + ".";
        ReplyException unsealed = refused(nodes.get(0), ExternalKvMembers.CHANGES + scope + other, forged);
        assertEquals(401, unsealed.failureCode(), unsealed.getMessage());
        ReplyException unsealedState = refused(nodes.get(0), ExternalKvMembers.STATES + scope + other, new byte[0]);
        assertEquals(401, unsealedState.failureCode(), "a state is given only to a member of the cluster");
        assertEquals("w1=2", prefix(clients.get(1)), "nothing changed");
        assertEquals(1, nodes.get(1).meters().cluster().rejectedCount("grpc_changes", "unsigned"));
        assertEquals(1, nodes.get(1).meters().cluster().rejectedCount("grpc_states", "unsigned"));
    }

    /** A member's peer-change figures as its /metrics page shows them. */
    record ExternalKvMetrics(long missed, long applied, long copied) {}

    private static ExternalKvMetrics metrics(IndexerNode node) {
        MetricsPage page = MetricsPage.of(new HttpJson(node.httpPort()));
        return new ExternalKvMetrics(
                (long) page.value("kvindexer_grpc_peer_changes_total{outcome=\"sent_missed\"}"),
                (long) page.value("kvindexer_grpc_peer_changes_total{outcome=\"received_applied\"}"),
                (long) page.value("kvindexer_grpc_state_copied"));
    }

    private static ReplyException refused(IndexerNode from, String address, byte[] body) throws Exception {
        Throwable t = get(from.vertx()
                .eventBus()
                .request(address, Buffer.buffer(body))
                .transform(ar -> Future.succeededFuture(ar.cause())));
        assertTrue(t instanceof ReplyException, String.valueOf(t));
        return (ReplyException) t;
    }

    private static ApplyExternalKvBatchRequest batch(String worker, long... hashes) {
        return ApplyExternalKvBatchRequest.newBuilder()
                .setWorkerId(worker)
                .setWorkerAddress("http://" + worker)
                .addActions(ExternalKvAction.newBuilder()
                        .setType(ExternalKvActionType.ACTION_REPORT)
                        .setTier(TierType.TIER_HBM)
                        .addAllHashes(LongStream.of(hashes).boxed().toList()))
                .build();
    }

    /** The prefix answer for {@link #PROMPT} as "worker=blocks ...", by worker id. */
    private static String prefix(KVIndexerGrpcClient client) throws Exception {
        return prefix(client, PROMPT);
    }

    private static String prefix(KVIndexerGrpcClient client, long... prompt) throws Exception {
        MatchExternalKvPrefixResponse r = get(client.matchExternalKvPrefix(MatchExternalKvPrefixRequest.newBuilder()
                .addAllHashes(LongStream.of(prompt).boxed().toList())
                .build()));
        return String.join(
                " ",
                r.getMatchesList().stream()
                        .map(m -> m.getWorkerId() + "=" + m.getMatchedPrefixBlocks())
                        .sorted()
                        .toList());
    }

    private static <T> T get(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
}
