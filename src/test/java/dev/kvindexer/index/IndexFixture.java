package dev.kvindexer.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.event.WorkerRank;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reference tree-test convention (docs/protocol/index.md#test-vectors): block i has local hash i and engine hash i
 * × 100.
 */
final class IndexFixture {
    private IndexFixture() {}

    /** An answer keyed by owner, as {@link ReferenceIndex#match} gives its own. */
    static Map<WorkerRank, OwnerMatch> byOwner(List<OwnerMatch> matches) {
        Map<WorkerRank, OwnerMatch> out = new HashMap<>();
        for (OwnerMatch m : matches) {
            out.put(new WorkerRank(m.workerId(), m.dpRank()), m);
        }
        return out;
    }

    /** Removes blocks from the index and the reference alike: both must miss as many. */
    static void remove(PartitionIndex index, ReferenceIndex ref, WorkerRank o, StorageTier tier, long[] hashes) {
        assertEquals(ref.remove(o, tier, hashes), index.remove(o.workerId(), o.dpRank(), tier, hashes), "missing");
    }

    /** Clears an owner's blocks in the index and the reference alike. */
    static void clear(PartitionIndex index, ReferenceIndex ref, WorkerRank o) {
        ref.clear(o);
        index.clear(o.workerId(), o.dpRank());
    }

    /** Removes a worker from the index and the reference alike. */
    static void removeWorker(PartitionIndex index, ReferenceIndex ref, long workerId) {
        ref.removeWorker(workerId);
        index.removeWorker(workerId);
    }

    static long[] locals(long... ids) {
        return ids.clone();
    }

    static long[] engines(long... ids) {
        long[] out = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = ids[i] * 100;
        }
        return out;
    }

    static StoreOutcome store(PartitionIndex index, long worker, long... ids) {
        return index.store(worker, 0, StorageTier.DEVICE, false, 0, engines(ids), locals(ids));
    }

    static StoreOutcome storeUnder(PartitionIndex index, long worker, long parentEngineHash, long... ids) {
        return index.store(worker, 0, StorageTier.DEVICE, true, parentEngineHash, engines(ids), locals(ids));
    }

    static int remove(PartitionIndex index, long worker, long... ids) {
        return index.remove(worker, 0, StorageTier.DEVICE, engines(ids));
    }

    /** Device scores as "worker:rank" → gpu blocks, owners with gpu ≥ 1 only (what find_matches returns). */
    static Map<String, Integer> scores(PartitionIndex index, long... localHashes) {
        Map<String, Integer> out = new TreeMap<>();
        for (OwnerMatch m : index.match(localHashes)) {
            if (m.gpuBlocks() >= 1) {
                out.put(Long.toUnsignedString(m.workerId()) + ":" + m.dpRank(), m.gpuBlocks());
            }
        }
        return out;
    }

    /** Every match as "worker:rank" → [gpu, cpu, disk] blocks. */
    static Map<String, List<Integer>> tiers(PartitionIndex index, long... localHashes) {
        Map<String, List<Integer>> out = new TreeMap<>();
        for (OwnerMatch m : index.match(localHashes)) {
            out.put(
                    Long.toUnsignedString(m.workerId()) + ":" + m.dpRank(),
                    List.of(m.gpuBlocks(), m.cpuBlocks(), m.diskBlocks()));
        }
        return out;
    }

    static WorkerRank w(long worker) {
        return new WorkerRank(worker, 0);
    }
}
