package dev.kvindexer.index;

import dev.kvindexer.event.StorageTier;
import it.unimi.dsi.fastutil.ints.IntArrayFIFOQueue;
import java.util.ArrayDeque;

/**
 * One walk of {@link PartitionIndex#dump(BlockVisitor, boolean)}: the device tree (a block for an owner only where it
 * holds every ancestor too), then the lower tiers, then the blocks placed by sequence hash.
 */
final class DumpWalk {
    /** Marks depth-1 nodes, whose chain is just their own holders. */
    private static final long[] AT_ROOT = new long[0];

    private final PartitionIndex index;
    private final BlockVisitor sink;

    DumpWalk(PartitionIndex index, BlockVisitor sink) {
        this.index = index;
        this.sink = sink;
    }

    void run(boolean depthFirst) {
        deviceTree(depthFirst);
        lowerTiers();
        if (index.bySequence != null) {
            index.bySequence.dump(new BlockVisitor() {
                @Override
                public void stored(
                        long workerId,
                        int dpRank,
                        StorageTier tier,
                        boolean hasParent,
                        long parentHash,
                        long blockHash,
                        long tokensHash) {
                    sink.storedBySequence(workerId, dpRank, tier, hasParent, parentHash, blockHash);
                }

                @Override
                public void copies(int copies) {
                    sink.copies(copies);
                }
            });
        }
    }

    private void deviceTree(boolean depthFirst) {
        DeviceTree tree = index.tree;
        DeviceNodes nodes = tree.nodes;
        IntArrayFIFOQueue queue = new IntArrayFIFOQueue();
        ArrayDeque<long[]> chains = new ArrayDeque<>(); // owners holding the whole path to the queued node
        nodes.forEachChild(DeviceNodes.ROOT, c -> {
            queue.enqueue(c);
            chains.add(AT_ROOT);
        });
        while (!queue.isEmpty()) {
            int node = depthFirst ? queue.dequeueLastInt() : queue.dequeueInt();
            long[] parentChain = depthFirst ? chains.pollLast() : chains.poll();
            long[] chain = holdersOfWholePath(nodes, node, parentChain);
            nodes.forEachChild(node, c -> {
                queue.enqueue(c);
                chains.add(chain);
            });
        }
    }

    /** Reports the node for each owner that holds its whole path; returns those owners as a bitset. */
    private long[] holdersOfWholePath(DeviceNodes nodes, int node, long[] parentChain) {
        DeviceTree tree = index.tree;
        int words = nodes.holders.wordCount(node);
        long[] chain = new long[words];
        int parent = nodes.parent(node);
        long local = nodes.local(node);
        boolean hasParent = parentChain != AT_ROOT;
        for (int w = 0; w < words; w++) {
            long bits = nodes.holders.word(node, w);
            if (hasParent) {
                bits &= w < parentChain.length ? parentChain[w] : 0L;
            }
            chain[w] = bits;
            while (bits != 0) {
                int id = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                Owner o = index.owners.byId(id);
                long hash = tree.hashOf(node, id);
                sink.stored(
                        o.workerId,
                        o.dpRank,
                        StorageTier.DEVICE,
                        hasParent,
                        hasParent ? tree.hashOf(parent, id) : 0L,
                        hash,
                        local);
                reportCopies(tree.copies(o, hash));
            }
        }
        return chain;
    }

    private void lowerTiers() {
        for (LowerTierIndex t : index.lower) {
            if (t == null) {
                continue;
            }
            t.forEachEdge(e -> {
                for (int id : e.holderIds()) {
                    Owner o = index.owners.byId(id);
                    sink.stored(o.workerId, o.dpRank, t.tier, e.hasParent, e.parentHash, e.childHash, e.localHash);
                    reportCopies(o.lower(t.slot).copies(e.childHash));
                }
            });
        }
    }

    private void reportCopies(int copies) {
        if (copies > 1) {
            sink.copies(copies);
        }
    }
}
