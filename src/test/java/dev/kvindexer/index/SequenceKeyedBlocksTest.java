package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.BlockHasher;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Blocks stored without tokens (docs/protocol/events.md#standardized-events-into-index-operations): only their rolling
 * sequence hashes are known, and those place them. A
 * token query (chaining its local hashes) and a sequence-hash query find them, beside blocks placed by tokens.
 */
class SequenceKeyedBlocksTest {
    private static final int BS = 2;
    private static final long A = 1;
    private static final long B = 2;
    private static final long STORE = 50;

    private final PartitionIndex index = new PartitionIndex(BS);
    /** Four blocks of tokens 0..7, and a prompt that shares only its first two. */
    private final long[] local = BlockHasher.localHashes(new int[] {0, 1, 2, 3, 4, 5, 6, 7}, BS, BlockHasher.BASE_SEED);

    private final long[] seq = BlockHasher.sequenceHashes(local);
    private final long[] otherLocal =
            BlockHasher.localHashes(new int[] {0, 1, 2, 3, 9, 9, 9, 9}, BS, BlockHasher.BASE_SEED);

    private StoreOutcome storeSeq(long worker, StorageTier tier, Long parent, long... hashes) {
        return index.storeBySequence(worker, 0, tier, parent != null, parent == null ? 0 : parent, hashes);
    }

    private static List<OwnerMatch> sorted(List<OwnerMatch> m) {
        List<OwnerMatch> out = new ArrayList<>(m);
        out.sort(Comparator.comparingLong(OwnerMatch::workerId).thenComparingInt(OwnerMatch::dpRank));
        return out;
    }

    @Test
    void tokenlessBlocksAnswerTokenAndSequenceQueries() {
        assertEquals(StoreOutcome.OK, storeSeq(A, StorageTier.DEVICE, null, seq[0], seq[1], seq[2]));
        assertEquals(StoreOutcome.OK, storeSeq(A, StorageTier.DEVICE, seq[2], seq[3]));
        assertEquals(List.of(new OwnerMatch(A, 0, 4, 4, 4)), index.match(local));
        assertEquals(List.of(new OwnerMatch(A, 0, 2, 2, 2)), index.match(otherLocal), "a prompt diverging at block 3");
        assertEquals(0, index.localHashesOfSequence(seq).length, "no block placed by tokens");
        assertEquals(List.of(new OwnerMatch(A, 0, 4, 4, 4)), index.match(index.localHashesOfSequence(seq), seq));
        assertEquals(4, index.blockCount());
        assertEquals(4, index.heldBlocks(A, 0, StorageTier.DEVICE));
        assertEquals(
                StoreOutcome.PARENT_BLOCK_NOT_FOUND,
                storeSeq(B, StorageTier.DEVICE, seq[0], seq[1]),
                "a parent is the owner's own block, as with tokens");
    }

    @Test
    void ownersOfEitherKindAnswerSideBySide() {
        index.store(B, 0, StorageTier.DEVICE, false, 0, new long[] {100, 200}, new long[] {local[0], local[1]});
        storeSeq(A, StorageTier.DEVICE, null, seq[0], seq[1], seq[2]);
        assertEquals(List.of(new OwnerMatch(A, 0, 3, 3, 3), new OwnerMatch(B, 0, 2, 2, 2)), sorted(index.match(local)));
        // The hash query reaches B's blocks through the tree and A's by their sequence hashes.
        assertArrayEquals(new long[] {local[0], local[1]}, index.localHashesOfSequence(seq));
        assertEquals(sorted(index.match(local)), sorted(index.match(index.localHashesOfSequence(seq), seq)));
        // An owner with blocks of both kinds gets the longer reach of the two, never their sum.
        index.store(A, 0, StorageTier.DEVICE, false, 0, new long[] {100}, new long[] {local[0]});
        assertEquals(new OwnerMatch(A, 0, 3, 3, 3), sorted(index.match(local)).get(0));
    }

    @Test
    void removesClearsAndUnregistrationsReachTokenlessBlocks() {
        storeSeq(A, StorageTier.DEVICE, null, seq[0], seq[1], seq[2], seq[3]);
        storeSeq(A, StorageTier.DEVICE, seq[2], seq[3]);
        assertEquals(2, index.copies(A, 0, StorageTier.DEVICE, seq[3]));
        assertEquals(0, index.remove(A, 0, StorageTier.DEVICE, new long[] {seq[3]}));
        assertEquals(4, index.match(local).get(0).gpuBlocks(), "one copy of block 4 remains");
        assertEquals(1, index.remove(A, 0, StorageTier.DEVICE, new long[] {seq[3], 12345}), "12345 was never held");
        assertEquals(3, index.match(local).get(0).gpuBlocks());

        // An owner holding blocks of both kinds: each removed hash leaves the index that holds it.
        index.store(A, 0, StorageTier.DEVICE, false, 0, new long[] {100}, new long[] {local[0]});
        assertEquals(0, index.remove(A, 0, StorageTier.DEVICE, new long[] {100, seq[2]}));
        assertEquals(List.of(new OwnerMatch(A, 0, 2, 2, 2)), index.match(local));

        index.clear(A, 0);
        assertTrue(index.match(local).isEmpty());
        assertTrue(index.isEmpty());
        storeSeq(A, StorageTier.DEVICE, null, seq[0]);
        index.removeWorkerDpRank(A, 0);
        assertTrue(index.isEmpty());
        storeSeq(A, StorageTier.DISK, null, seq[0]);
        index.removeWorker(A);
        assertTrue(index.isEmpty());
    }

    @Test
    void aSharedStoreWithoutTokensExtendsEveryEngineAfterItsGpuPrefix() {
        storeSeq(A, StorageTier.DEVICE, null, seq[0], seq[1]);
        index.markSharedStore(STORE, true); // after the sequence-keyed blocks exist: the mark must reach them too
        assertEquals(StoreOutcome.OK, storeSeq(STORE, StorageTier.HOST_PINNED, null, seq[0], seq[1], seq[2]));
        assertEquals(StoreOutcome.OK, storeSeq(STORE, StorageTier.DISK, seq[2], seq[3]));
        assertEquals(StoreOutcome.STORE_DEVICE_TIER, storeSeq(STORE, StorageTier.DEVICE, null, seq[0]));
        assertEquals(List.of(new OwnerMatch(A, 0, 2, 3, 4)), index.match(local));
        assertArrayEquals(new int[] {3, 4}, index.sharedReach(local), "what a rank with nothing of its own reaches");
        assertArrayEquals(new int[] {3, 4}, index.sharedReach(new long[0], seq));
        index.markSharedStore(STORE, false);
        assertEquals(
                List.of(new OwnerMatch(A, 0, 2, 2, 2), new OwnerMatch(STORE, 0, 0, 3, 4)),
                sorted(index.match(local)),
                "an ordinary worker again: its blocks are its own");
    }

    @Test
    void loraSeededSequenceHashesMatchOnlyTheirAdapter() {
        long loraSeed = BlockHasher.seedFor("adapter-1", null);
        long[] loraLocal = BlockHasher.localHashes(new int[] {0, 1, 2, 3}, BS, loraSeed);
        long[] loraSeq = BlockHasher.sequenceHashes(loraLocal);
        storeSeq(A, StorageTier.DEVICE, null, loraSeq);
        assertTrue(index.match(local).isEmpty(), "the base model's prompt");
        assertEquals(List.of(new OwnerMatch(A, 0, 2, 2, 2)), index.match(loraLocal));
    }

    @Test
    void dumpReportsTokenlessBlocksAfterTheOthersWithTheirCopies() {
        index.store(B, 0, StorageTier.DEVICE, false, 0, new long[] {100}, new long[] {local[0]});
        storeSeq(A, StorageTier.DEVICE, null, seq[0], seq[1]);
        storeSeq(A, StorageTier.DEVICE, seq[0], seq[1]);
        List<String> out = new ArrayList<>();
        index.dump(new BlockVisitor() {
            @Override
            public void stored(
                    long workerId,
                    int dpRank,
                    StorageTier tier,
                    boolean hasParent,
                    long parentHash,
                    long blockHash,
                    long tokensHash) {
                out.add("tokens " + workerId + " " + blockHash);
            }

            @Override
            public void storedBySequence(
                    long workerId,
                    int dpRank,
                    StorageTier tier,
                    boolean hasParent,
                    long parentHash,
                    long sequenceHash) {
                out.add("sequence " + workerId + " " + (hasParent ? parentHash + "->" : "") + sequenceHash);
            }

            @Override
            public void copies(int copies) {
                out.add("x" + copies);
            }
        });
        assertEquals(
                List.of("tokens 2 100", "sequence 1 " + seq[0], "sequence 1 " + seq[0] + "->" + seq[1], "x2"), out);
    }
}
