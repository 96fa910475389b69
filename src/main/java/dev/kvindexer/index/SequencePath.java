package dev.kvindexer.index;

import dev.kvindexer.hash.BlockHasher;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.Arrays;

/**
 * Turns a prompt given as rolling sequence hashes (docs/protocol/hashing.md#rolling-sequence-hash; Mooncake {@code
 * /query_by_hash}) into the local hashes
 * the index is keyed by, as far as the index holds the prefix. {@code seq[0]} is {@code local[0]}; after that, block i
 * is the child (device node or lower-tier edge) whose local hash chains {@code seq[i-1]} into {@code seq[i]}. No
 * per-node sequence hash is stored: the walk chains each candidate child, which costs one XXH3 of 16 bytes per child
 * looked at.
 */
final class SequencePath {
    private SequencePath() {}

    static long[] localHashes(DeviceTree tree, LowerTierIndex[] lower, long[] seq) {
        int n = seq.length;
        long[] out = new long[n];
        if (n == 0) {
            return out;
        }
        int i = 0;
        DeviceNodes nodes = tree.nodes;
        int node = nodes.child(DeviceNodes.ROOT, seq[0]);
        if (node != DeviceTree.NONE) {
            out[i++] = seq[0];
            while (i < n) {
                int next = childChaining(nodes, node, seq[i - 1], seq[i]);
                if (next == DeviceTree.NONE) {
                    break;
                }
                out[i++] = nodes.local(next);
                node = next;
            }
        }
        // Past the device tree, lower-tier chains continue from the engine hashes of the last block reached.
        LongArrayList frontier = new LongArrayList();
        if (node != DeviceTree.NONE) {
            for (int id : nodes.holders.ids(node)) {
                frontier.add(tree.hashOf(node, id));
            }
        }
        while (i < n) {
            LongArrayList next = new LongArrayList();
            long local = 0;
            for (LowerTierIndex t : lower) {
                if (t == null) {
                    continue;
                }
                if (i == 0) {
                    LowerEdge e = t.rootEdge(seq[0]);
                    if (e != null) {
                        local = seq[0];
                        next.add(e.childHash);
                    }
                    continue;
                }
                for (int f = 0; f < frontier.size(); f++) {
                    for (LowerEdge e = t.firstChildOf(frontier.getLong(f)); e != null; e = e.nextSibling) {
                        if (BlockHasher.chain(seq[i - 1], e.localHash) == seq[i]) {
                            local = e.localHash;
                            next.add(e.childHash);
                        }
                    }
                }
            }
            if (next.isEmpty()) {
                break;
            }
            out[i++] = local;
            frontier = next;
        }
        return i == n ? out : Arrays.copyOf(out, i);
    }

    private static int childChaining(DeviceNodes nodes, int node, long prevSeq, long seq) {
        int[] found = {DeviceTree.NONE};
        nodes.forEachChild(node, c -> {
            if (found[0] == DeviceTree.NONE && BlockHasher.chain(prevSeq, nodes.local(c)) == seq) {
                found[0] = c;
            }
        });
        return found[0];
    }
}
