package dev.kvindexer.index;

import java.util.Arrays;

/**
 * Turns a prompt given as its engine's own block hashes (SGLang's chained SHA-256 hashes, as its KV events carry
 * them and its router computes them) into the local hashes the index is keyed by, as far as the index holds the
 * prefix in any tier. Block i is the device node stored under engine hash i whose parent is block i-1's node, or,
 * past the device tree, the lower-tier edge under engine hash i-1 whose child is engine hash i.
 */
final class EnginePath {
    private EnginePath() {}

    static long[] localHashes(DeviceTree tree, LowerTierIndex[] lower, OwnerTable owners, long[] engine) {
        int n = engine.length;
        long[] out = new long[n];
        int i = 0;
        DeviceNodes nodes = tree.nodes;
        int parent = DeviceNodes.ROOT;
        while (i < n) {
            int node = tree.nodeOfEngineHash(engine[i]);
            // The same check a walk from the root makes: the node is its parent's child at its local hash.
            if (node == DeviceTree.NONE || nodes.child(parent, nodes.local(node)) != node) {
                break;
            }
            out[i++] = nodes.local(node);
            parent = node;
        }
        if (i == 0 && n > 0) {
            LowerEdge root = rootEdge(lower, owners, engine[0]);
            if (root == null) {
                return new long[0];
            }
            out[i++] = root.localHash;
        }
        while (i < n) {
            long local = 0;
            boolean found = false;
            for (LowerTierIndex t : lower) {
                if (t == null || found) {
                    continue;
                }
                for (LowerEdge e = t.firstChildOf(engine[i - 1]); e != null; e = e.nextSibling) {
                    if (e.childHash == engine[i]) {
                        local = e.localHash;
                        found = true;
                        break;
                    }
                }
            }
            if (!found) {
                break;
            }
            out[i++] = local;
        }
        return i == n ? out : Arrays.copyOf(out, i);
    }

    /**
     * The edge of a first block held only in a lower tier: root edges are keyed by local hash, so the owners'
     * own engine-hash maps are asked. Only a prompt the device tree does not start pays this.
     */
    private static LowerEdge rootEdge(LowerTierIndex[] lower, OwnerTable owners, long engineHash) {
        for (LowerTierIndex t : lower) {
            if (t == null) {
                continue;
            }
            for (int id = 0; id < owners.idLimit(); id++) {
                Owner o = owners.byId(id);
                LowerTierBlocks<LowerEdge> held = o == null ? null : o.lowerIfAny(t.slot);
                LowerEdge e = held == null ? null : held.byHash.get(engineHash);
                if (e != null && !e.hasParent) {
                    return e;
                }
            }
        }
        return null;
    }
}
