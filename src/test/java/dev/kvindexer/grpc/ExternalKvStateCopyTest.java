package dev.kvindexer.grpc;

import static dev.kvindexer.grpc.GrpcFixture.longs;
import static dev.kvindexer.grpc.GrpcFixture.report;
import static dev.kvindexer.grpc.GrpcFixture.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.grpc.v1.ApplyExternalKvBatchRequest;
import dev.kvindexer.grpc.v1.ConfigureExpectedWorkersRequest;
import dev.kvindexer.grpc.v1.ExpectedWorker;
import dev.kvindexer.grpc.v1.ExternalKvNodeMatch;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvRequest;
import dev.kvindexer.grpc.v1.MatchExternalKvResponse;
import dev.kvindexer.grpc.v1.ReplaceExternalKvSnapshotRequest;
import dev.kvindexer.grpc.v1.TierHashes;
import dev.kvindexer.grpc.v1.TierType;
import io.vertx.grpc.server.StatusException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * A member's bridge state copied to another (docs/api/sglang-grpc.md#in-a-cluster): the copy answers every query as
 * the original does, keeps each worker's fence, and a state whose bytes do not add up changes nothing.
 */
class ExternalKvStateCopyTest {
    /** More than one batch of the contract's limit, so the copy splits a worker's holdings. */
    private static final int MANY = 2 * RequestChecks.MAX_HASHES_PER_REQUEST + 5;

    private static final int FULL_AND_SWA = ExternalKvIndex.FULL | ExternalKvIndex.SWA;
    private static final int HBM_DRAM = (1 << TierType.TIER_HBM_VALUE) | (1 << TierType.TIER_DRAM_VALUE);

    private final ExternalKvService original = new ExternalKvService(4);

    private ExternalKvService filled() {
        original.configure(ConfigureExpectedWorkersRequest.newBuilder()
                .addWorkers(ExpectedWorker.newBuilder()
                        .setWorkerId("w1")
                        .setWorkerAddress("http://w1")
                        .setCacheSpec(spec(FULL_AND_SWA, 64, HBM_DRAM, HBM_DRAM, 0)))
                .addWorkers(ExpectedWorker.newBuilder().setWorkerId("w2").setWorkerAddress("http://w2"))
                .addWorkers(ExpectedWorker.newBuilder().setWorkerId("idle").setWorkerAddress("http://idle"))
                .build());
        for (long from = 0; from < MANY; from += RequestChecks.MAX_HASHES_PER_REQUEST) {
            long[] hashes = LongStream.range(from, Math.min(MANY, from + RequestChecks.MAX_HASHES_PER_REQUEST))
                    .map(h -> h * 7919 + 1)
                    .toArray();
            int[] masks = new int[hashes.length];
            int[] sizes = new int[hashes.length];
            for (int i = 0; i < hashes.length; i++) {
                masks[i] = i % 3 == 0 ? ExternalKvIndex.FULL : FULL_AND_SWA;
                sizes[i] = 16 + i % 5;
            }
            original.apply(ApplyExternalKvBatchRequest.newBuilder()
                    .setWorkerId("w1")
                    .setWorkerAddress("http://w1")
                    .setCacheSpec(spec(FULL_AND_SWA, 64, HBM_DRAM, HBM_DRAM, 0))
                    .addActions(report(TierType.TIER_HBM, hashes, masks, sizes))
                    .build());
        }
        original.apply(ApplyExternalKvBatchRequest.newBuilder()
                .setWorkerId("w1")
                .setWorkerAddress("http://w1")
                .setCacheSpec(spec(FULL_AND_SWA, 64, HBM_DRAM, HBM_DRAM, 0))
                .addActions(report(TierType.TIER_DRAM, 1, 7920, 900_001))
                .build());
        original.replace(ReplaceExternalKvSnapshotRequest.newBuilder()
                .setWorkerId("w2")
                .setWorkerAddress("http://w2")
                .setWorkerEpoch("e1")
                .setAppliedSeq(7)
                .addHashesByTier(
                        TierHashes.newBuilder().setTier(TierType.TIER_DRAM).addAllHashes(longs(1, 7920, 15839)))
                .build());
        original.apply(fenced(8, 900_002));
        return original;
    }

    private static ApplyExternalKvBatchRequest fenced(long seq, long hash) {
        return ApplyExternalKvBatchRequest.newBuilder()
                .setWorkerId("w2")
                .setWorkerAddress("http://w2")
                .setWorkerEpoch("e1")
                .setEnforceSequence(true)
                .setSeq(seq)
                .addActions(report(TierType.TIER_HBM, hash))
                .build();
    }

    @Test
    void aCopyAnswersAsTheOriginalAndKeepsEachFence() {
        ExternalKvService from = filled();
        byte[] state = new ExternalKvReplica(from, ExternalKvPeers.NONE).state(Long.MAX_VALUE);
        ExternalKvService copy = new ExternalKvService(4);
        int changes = new ExternalKvReplica(copy, ExternalKvPeers.NONE).load(state);
        assertTrue(changes > 4, "the first worker's holdings took several batches: " + changes);

        assertEquals(from.workers(), copy.workers());
        assertEquals(from.readyWorkers(), copy.readyWorkers());
        assertEquals(2, copy.readyWorkers(), "the idle worker is configured, not ready");
        assertEquals(from.blocks(), copy.blocks());
        long[] all = LongStream.concat(
                        LongStream.range(0, MANY).map(h -> h * 7919 + 1), LongStream.of(900_001, 900_002, 15839))
                .toArray();
        assertEquals(holdings(from, all), holdings(copy, all));
        long[] prompt = LongStream.range(0, 40).map(h -> h * 7919 + 1).toArray();
        assertEquals(prefix(from, prompt), prefix(copy, prompt));

        assertTrue(copy.apply(fenced(8, 900_003)).getDuplicate(), "seq 8 was applied before the copy");
        assertEquals(9, copy.apply(fenced(9, 900_003)).getAppliedSeq(), "the fence goes on from the copy's seq");
    }

    @Test
    void aStateLargerThanAMemberMaySendIsRefusedWhereItIsBuilt() {
        ExternalKvReplica replica = new ExternalKvReplica(filled(), ExternalKvPeers.NONE);
        int whole = replica.state(Long.MAX_VALUE).length;
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> replica.state(whole - 1));
        assertTrue(refused.getMessage().contains("larger than"), refused.getMessage());
        assertEquals(whole, replica.state(whole).length);
    }

    @Test
    void aStateRefusedPartWayLeavesTheStartingMemberEmpty() {
        byte[] state = new ExternalKvReplica(filled(), ExternalKvPeers.NONE).state(Long.MAX_VALUE);
        // A member that holds fewer placements than the state brings: the copy is refused part-way, and undone.
        ExternalKvService small = new ExternalKvService(4, 3, 10_000, RegisteredEngines.NONE, givingState(state));
        small.join().toCompletionStage().toCompletableFuture().join();
        assertEquals(0, small.workers());
        assertEquals(0, small.blocks());

        ExternalKvService roomy = new ExternalKvService(4, 3, 1_000_000, RegisteredEngines.NONE, givingState(state));
        roomy.join().toCompletionStage().toCompletableFuture().join();
        assertEquals(3, roomy.workers(), "the same state, copied whole where it fits");
    }

    @Test
    void aMemberStillCopyingGivesNoStateOfItsOwn() {
        io.vertx.core.Promise<byte[]> later = io.vertx.core.Promise.promise();
        ExternalKvService starting =
                new ExternalKvService(4, 3, 1_000_000, RegisteredEngines.NONE, givingState(later.future()));
        starting.join();
        IllegalStateException refused = assertThrows(
                IllegalStateException.class, () -> starting.replica().state(Long.MAX_VALUE));
        assertTrue(refused.getMessage().contains("still copying"), refused.getMessage());

        later.complete(new ExternalKvReplica(filled(), ExternalKvPeers.NONE).state(Long.MAX_VALUE));
        assertEquals(3, starting.workers(), "its copy done, it holds the state");
        assertEquals(
                new ExternalKvReplica(original, ExternalKvPeers.NONE).state(Long.MAX_VALUE).length,
                starting.replica().state(Long.MAX_VALUE).length,
                "and gives it");
    }

    /** Another member, in memory: it gives {@code state} when asked and takes nothing. */
    private static ExternalKvPeers givingState(byte[] state) {
        return givingState(io.vertx.core.Future.succeededFuture(state));
    }

    private static ExternalKvPeers givingState(io.vertx.core.Future<byte[]> state) {
        return new ExternalKvPeers() {
            @Override
            public io.vertx.core.Future<Void> listen(
                    java.util.function.Consumer<byte[]> changes, java.util.function.LongFunction<byte[]> answer) {
                return io.vertx.core.Future.succeededFuture();
            }

            @Override
            public io.vertx.core.Future<Void> stop() {
                return io.vertx.core.Future.succeededFuture();
            }

            @Override
            public io.vertx.core.Future<Void> aside(Runnable work) {
                work.run();
                return io.vertx.core.Future.succeededFuture();
            }

            @Override
            public io.vertx.core.Future<Integer> toAll(byte[] change) {
                return io.vertx.core.Future.succeededFuture(0);
            }

            @Override
            public io.vertx.core.Future<byte[]> stateOfAny() {
                return state;
            }
        };
    }

    @Test
    void aStateWhoseBytesDoNotAddUpChangesNothing() {
        byte[] state = new ExternalKvReplica(filled(), ExternalKvPeers.NONE).state(Long.MAX_VALUE);
        ExternalKvService copy = new ExternalKvService(4);
        ExternalKvReplica replica = new ExternalKvReplica(copy, ExternalKvPeers.NONE);
        byte[] truncated = Arrays.copyOf(state, state.length - 3);
        byte[] trailing = Arrays.copyOf(state, state.length + 1);
        byte[] tooMany = state.clone();
        ByteBuffer.wrap(tooMany).putInt(0, Integer.MAX_VALUE);
        byte[] longChange = state.clone();
        ByteBuffer.wrap(longChange).putInt(4, Integer.MAX_VALUE);
        for (byte[] bad : List.of(truncated, trailing, tooMany, longChange, new byte[] {0, 0})) {
            assertThrows(IllegalArgumentException.class, () -> replica.load(bad));
            assertEquals(0, copy.workers(), "nothing applied");
            assertEquals(0, copy.blocks());
        }
        assertThrows(IllegalArgumentException.class, () -> replica.apply(new byte[] {9, 1, 2}), "an unknown kind");
        assertThrows(
                IllegalArgumentException.class,
                () -> replica.apply(new byte[] {ExternalKvReplica.APPLY, (byte) 0xFF, 0x7F}),
                "not a protobuf message");
        assertThrows(
                StatusException.class,
                () -> replica.apply(ExternalKvReplica.encode(
                        ExternalKvReplica.APPLY,
                        ApplyExternalKvBatchRequest.newBuilder().build())),
                "a change the contract refuses is refused here too");
        assertEquals(0, copy.workers());
    }

    private static Map<String, Object> prefix(ExternalKvService s, long[] hashes) {
        Map<String, Object> out = new TreeMap<>();
        s.matchPrefix(MatchExternalKvPrefixRequest.newBuilder()
                        .addAllHashes(longs(hashes))
                        .build())
                .toCompletionStage()
                .toCompletableFuture()
                .join()
                .getMatchesList()
                .forEach(m -> out.put(m.getWorkerId(), m.getWorkerAddress() + " " + m.getMatchedPrefixBlocks()));
        return out;
    }

    /**
     * worker (and address) → each (tier, hash, mask, size) it holds of {@code hashes}, in a canonical order; asked in
     * requests within the contract's limit.
     */
    private static Map<String, TreeSet<String>> holdings(ExternalKvService s, long[] hashes) {
        Map<String, TreeSet<String>> out = new TreeMap<>();
        for (int from = 0; from < hashes.length; from += RequestChecks.MAX_HASHES_PER_REQUEST) {
            long[] part = Arrays.copyOfRange(
                    hashes, from, Math.min(hashes.length, from + RequestChecks.MAX_HASHES_PER_REQUEST));
            MatchExternalKvResponse r = s.match(MatchExternalKvRequest.newBuilder()
                    .addAllHashes(longs(part))
                    .build());
            for (ExternalKvNodeMatch m : r.getMatchesList()) {
                TreeSet<String> held =
                        out.computeIfAbsent(m.getWorkerId() + " " + m.getAddress(), k -> new TreeSet<>());
                for (TierHashes t : m.getHashesByTierList()) {
                    for (int i = 0; i < t.getHashesCount(); i++) {
                        held.add(t.getTier() + " " + t.getHashes(i) + " " + t.getComponentMasks(i) + " "
                                + t.getBlockSizes(i));
                    }
                }
            }
        }
        return out;
    }
}
