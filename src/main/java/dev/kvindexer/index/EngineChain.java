package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import java.util.Arrays;

/**
 * One owner's engine hashes along a prompt, from its first block: the device blocks it holds, then the host-pinned
 * extension beyond them, the same reach its tiered match counts. The hashes are the owner's own, so another engine
 * can ask it for exactly these blocks (a KV fetch hint names them). A read, like a match: several threads may ask at
 * once while no change runs.
 */
final class EngineChain {
    private static final long[] NONE = new long[0];

    private final DeviceTree tree;
    private final LowerTierIndex[] lower;
    private final OwnerTable owners;

    EngineChain(DeviceTree tree, LowerTierIndex[] lower, OwnerTable owners) {
        this.tree = tree;
        this.lower = lower;
        this.owners = owners;
    }

    /** At most {@code maxBlocks} hashes, position i naming block i of the prompt; empty when the owner has none. */
    long[] of(long workerId, int dpRank, long[] localHashes, int maxBlocks) {
        Owner o = owners.lookup(workerId, dpRank);
        int end = Math.min(maxBlocks, localHashes.length);
        if (o == null || end <= 0) {
            return NONE;
        }
        long[] chain = new long[end];
        int n = 0;
        for (int node = DeviceNodes.ROOT; n < end; n++) {
            node = tree.nodes.child(node, localHashes[n]);
            if (node == DeviceTree.NONE || !tree.nodes.holders.has(node, o.id)) {
                break;
            }
            chain[n] = tree.hashOf(node, o.id);
        }
        LowerTierIndex host = lower[LowerTiers.slot(StorageTier.HOST_PINNED)];
        if (host != null && n < end) {
            n += host.chain(o.id, n > 0, n > 0 ? chain[n - 1] : 0, localHashes, n, end, chain);
        }
        return n == end ? chain : Arrays.copyOf(chain, n);
    }
}
