package dev.kvindexer.index;

import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.ArrayList;
import java.util.List;

/**
 * The device-tier prefix tree of SPEC §6.2–6.5, keyed by local hash, with engine-hash lookups and reference
 * counts per owner. Nodes are identified by their position: an engine hash stored at a new position moves
 * there (detached subtrees are never re-attached, unlike the reference).
 *
 * <p>Engines that hash alike (vLLM's chained hashes, with one seed) give a shared block the same engine hash in
 * every holder, so one table from engine hash to node serves them all: a holder costs one bit, not an entry in a
 * map of its own (BENCHMARKS.md, memory). An owner's hash that the shared table does not lead to (another engine
 * hash for the same block, or the same hash at another position) is kept in that owner's own map.
 */
final class DeviceTree {
    final DeviceNode root = new DeviceNode(null, 0L, 0L);
    /** Engine hash → the live node first stored under it (its {@code blockHash}). */
    private final Long2ObjectOpenHashMap<DeviceNode> byHash = new Long2ObjectOpenHashMap<>();
    private final LongOpenHashSet repeatScratch = new LongOpenHashSet();
    private long nodes;   // nodes with at least one holder, attached or detached
    private long entries; // (owner, node) holder pairs

    StoreOutcome store(OwnerTable owners, long workerId, int dpRank, boolean hasParent, long parentHash,
                       long[] blockHashes, long[] localHashes) {
        DeviceNode parent = root;
        Owner o;
        if (hasParent) {
            o = owners.find(workerId, dpRank);
            parent = o == null ? null : find(o, parentHash);
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

    /** The node where an owner holds an engine hash, attached or detached, or null. */
    DeviceNode find(Owner o, long h) {
        DeviceNode node = byHash.get(h);
        if (node != null && node.hasHolder(o.id) && node.hashOf(o.id) == h) {
            return node;
        }
        return o.device.byHash.get(h);
    }

    private DeviceNode storeOne(Owner o, DeviceNode parent, long h, long local) {
        DeviceNode node = parent.child(local);
        if (node == null) {
            node = new DeviceNode(parent, local, h);
            parent.putChild(node);
        }
        OwnerBlocks<DeviceNode> held = o.device;
        DeviceNode before = find(o, h);
        if (before == node) {
            held.addCopy(h);
            return node;
        }
        if (before != null) {
            // The owner's hash was held at another position: it moves here with one copy.
            leave(o, before);
            held.resetCopies(h);
        }
        if (node.hasHolder(o.id)) {
            // Already held under another engine hash (block_hash mismatch): the new hash replaces it.
            long old = node.hashOf(o.id);
            held.byHash.remove(old, node);
            held.resetCopies(old);
        } else {
            if (node.hasNoHolder()) {
                nodes++;
            }
            node.addHolder(o.id);
            o.deviceBlocks++;
            entries++;
        }
        if (h != node.blockHash || node.hashOf(o.id) != h) {
            node.setHashOf(o.id, h);
        }
        if (h == node.blockHash) {
            DeviceNode shared = byHash.putIfAbsent(h, node);
            if (shared != null && shared != node) {
                held.byHash.put(h, node); // the shared entry names another position
            }
        } else {
            held.byHash.put(h, node);
        }
        return node;
    }

    int remove(Owner o, long[] blockHashes) {
        if (o == null) {
            return blockHashes.length;
        }
        OwnerBlocks<DeviceNode> held = o.device;
        int missing = 0;
        for (long h : blockHashes) {
            DeviceNode node = find(o, h);
            if (node == null) {
                missing++;
            } else if (held.dropCopy(h)) {
                leave(o, node);
            }
        }
        return missing;
    }

    /** Copies of an engine hash an owner holds (its reference count), 0 when it does not hold it. */
    int copies(Owner o, long h) {
        return find(o, h) == null ? 0 : o.device.copiesOfHeld(h);
    }

    /**
     * Takes an owner off every node it holds. The nodes are found by a pass over the shared table (a clear is rare:
     * an engine restart or reset, an unregistration) and over the owner's own map.
     */
    void clearOwner(Owner o) {
        List<DeviceNode> mine = new ArrayList<>(o.deviceBlocks);
        for (DeviceNode node : byHash.values()) {
            if (node.hasHolder(o.id) && node.hashOf(o.id) == node.blockHash) {
                mine.add(node);
            }
        }
        for (DeviceNode node : o.device.byHash.values()) {
            boolean listed = node.hashOf(o.id) == node.blockHash && byHash.get(node.blockHash) == node;
            if (!listed) {
                mine.add(node);
            }
        }
        for (DeviceNode node : mine) {
            leave(o, node);
        }
        o.device.clear();
    }

    /** Takes the owner off a node; an emptied node detaches itself and its subtree (SPEC §6.3). */
    private void leave(Owner o, DeviceNode node) {
        long h = node.hashOf(o.id);
        OwnerBlocks<DeviceNode> held = o.device;
        held.byHash.remove(h, node); // only if it is this node's entry (nodes do not override equals)
        held.resetCopies(h);
        node.removeHolder(o.id);
        node.forgetHashOf(o.id);
        o.deviceBlocks--;
        entries--;
        if (node.hasNoHolder()) {
            nodes--;
            byHash.remove(node.blockHash, node);
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
