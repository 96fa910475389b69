package dev.kvindexer.index;

import it.unimi.dsi.fastutil.longs.LongOpenHashSet;

/**
 * The device-tier prefix tree of SPEC §6.2–6.5, keyed by local hash, with per-owner engine-hash lookups
 * and reference counts. Nodes are identified by their position: an engine hash stored at a new position
 * moves there (detached subtrees are never re-attached, unlike the reference).
 */
final class DeviceTree {
    final DeviceNode root = new DeviceNode(null, 0L, 0L);
    private final LongOpenHashSet repeatScratch = new LongOpenHashSet();
    private long nodes;   // nodes with at least one holder, attached or detached
    private long entries; // (owner, node) holder pairs

    StoreOutcome store(OwnerTable owners, long workerId, int dpRank, boolean hasParent, long parentHash,
                       long[] blockHashes, long[] localHashes) {
        DeviceNode parent = root;
        Owner o;
        if (hasParent) {
            o = owners.find(workerId, dpRank);
            parent = o == null ? null : o.device.byHash.get(parentHash);
            if (parent == null) {
                return StoreOutcome.PARENT_BLOCK_NOT_FOUND;
            }
        }
        if (!validChain(hasParent, parentHash, blockHashes)) {
            return StoreOutcome.INVALID_BLOCK_SEQUENCE;
        }
        o = owners.intern(workerId, dpRank);
        for (int i = 0; i < blockHashes.length; i++) {
            parent = storeOne(o, parent, blockHashes[i], localHashes[i]);
        }
        return StoreOutcome.OK;
    }

    /** Rejects a block equal to its parent's engine hash or repeated within the chain, before applying any. */
    private boolean validChain(boolean hasParent, long parentHash, long[] hashes) {
        int n = hashes.length;
        if (n <= 16) {
            for (int i = 0; i < n; i++) {
                long h = hashes[i];
                if (hasParent && h == parentHash) {
                    return false;
                }
                for (int j = 0; j < i; j++) {
                    if (hashes[j] == h) {
                        return false;
                    }
                }
            }
            return true;
        }
        LongOpenHashSet seen = repeatScratch;
        seen.clear();
        try {
            for (long h : hashes) {
                if ((hasParent && h == parentHash) || !seen.add(h)) {
                    return false;
                }
            }
            return true;
        } finally {
            seen.clear();
        }
    }

    private DeviceNode storeOne(Owner o, DeviceNode parent, long h, long local) {
        DeviceNode node = parent.child(local);
        if (node == null) {
            node = new DeviceNode(parent, local, h);
            parent.putChild(node);
        }
        Holdings<DeviceNode> held = o.device;
        DeviceNode before = held.byHash.putIfAbsent(h, node);
        if (before == node) {
            held.addCopy(h);
            return node;
        }
        if (before != null) {
            // The owner's hash was held at another position: it moves here with one copy.
            leave(o, before);
            held.byHash.put(h, node);
            held.resetCopies(h);
        }
        if (node.hasHolder(o.id)) {
            // Already held under another engine hash (block_hash mismatch): the new hash replaces it.
            held.forget(node.hashOf(o.id));
        } else {
            if (node.hasNoHolder()) {
                nodes++;
            }
            node.addHolder(o.id);
            entries++;
        }
        if (h != node.blockHash || node.hashOf(o.id) != h) {
            node.setHashOf(o.id, h);
        }
        return node;
    }

    int remove(Owner o, long[] blockHashes) {
        if (o == null) {
            return blockHashes.length;
        }
        Holdings<DeviceNode> held = o.device;
        int missing = 0;
        for (long h : blockHashes) {
            DeviceNode node = held.byHash.get(h);
            if (node == null) {
                missing++;
            } else if (held.dropCopy(h)) {
                held.byHash.remove(h);
                leave(o, node);
            }
        }
        return missing;
    }

    void clearOwner(Owner o) {
        for (DeviceNode node : o.device.byHash.values()) {
            leave(o, node);
        }
        o.device.clear();
    }

    /** Takes the owner off a node; an emptied node detaches itself and its subtree (SPEC §6.3). */
    private void leave(Owner o, DeviceNode node) {
        node.removeHolder(o.id);
        node.forgetHashOf(o.id);
        entries--;
        if (node.hasNoHolder()) {
            nodes--;
            node.dropChildren();
            DeviceNode parent = node.parent;
            if (parent != null) {
                parent.removeChild(node);
                node.parent = null;
            }
        }
    }

    long nodeCount() {
        return nodes;
    }

    long entryCount() {
        return entries;
    }
}
